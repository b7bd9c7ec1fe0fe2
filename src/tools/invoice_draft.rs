//! The one validator for a new invoice, with the human messages the form rounds quote and
//! the schema of each field they ask for. Every entry point (the tool's arguments, a form's
//! answers) goes through [`validate`].

use crate::ui::Lang;
use serde_json::{Map, Value, json};

pub(crate) use super::Problem;
use crate::providers::invoice::{NewInvoice, minor_units};
use grantry_base::clock::unix_now;

/// The currencies grantry offers in a form (any ISO 4217 code the provider takes works in
/// arguments too, if it is one of these).
pub(crate) const CURRENCIES: [&str; 12] = [
    "EUR", "USD", "GBP", "CHF", "CAD", "AUD", "NZD", "JPY", "SEK", "NOK", "DKK", "INR",
];

/// The longest customer name and description taken (in characters), for the form's schema
/// and the validator alike.
const MAX_CUSTOMER_NAME: usize = 200;
const MAX_DESCRIPTION: usize = 500;

/// The fields of a new invoice, in the order a form shows them.
pub(crate) const FIELDS: [&str; 6] = [
    "email",
    "customer_name",
    "amount",
    "currency",
    "due_date",
    "description",
];

/// The JSON Schema of one field, as a form asks for it (its title in `lang`): flat
/// primitives with formats and enums where they fit. Never a secret: invoices carry none.
pub(crate) fn field_schema(field: &str, lang: Lang) -> Value {
    let mut schema = match field {
        "email" => json!({"type": "string", "format": "email",
            "description": "Where the invoice is sent."}),
        "customer_name" => {
            json!({"type": "string", "minLength": 1, "maxLength": MAX_CUSTOMER_NAME})
        }
        "amount" => json!({"type": "number", "exclusiveMinimum": 0,
            "description": "Total, in the currency's units (e.g. 120.50)."}),
        "currency" => json!({"type": "string", "enum": CURRENCIES}),
        "due_date" => json!({"type": "string", "format": "date",
            "description": "YYYY-MM-DD, today or later."}),
        "description" => json!({"type": "string", "maxLength": MAX_DESCRIPTION}),
        _ => return json!({"type": "string"}),
    };
    schema["title"] = lang
        .t(&format!("invoice-field-{}", field.replace('_', "-")))
        .into();
    schema
}

/// The tool's input schema: every field, `description` optional.
pub(crate) fn input_schema() -> Value {
    let properties: Map<String, Value> = FIELDS
        .iter()
        .map(|f| ((*f).to_owned(), field_schema(f, Lang::En)))
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": ["email", "customer_name", "amount", "currency", "due_date"],
        "additionalProperties": false
    })
}

/// Checks `values`; the invoice, or every problem at once (each field at most once).
pub(crate) fn validate(values: &Map<String, Value>) -> Result<NewInvoice, Vec<Problem>> {
    let mut problems = Problems::default();
    let text = |name: &str| {
        values
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let email = problems.unless(
        text("email").filter(|e| is_email(e)),
        "email",
        "invoice-problem-email",
    );
    let name = problems.unless(
        text("customer_name").filter(|n| n.chars().count() <= MAX_CUSTOMER_NAME),
        "customer_name",
        "invoice-problem-customer-name",
    );
    let currency = problems.unless(
        text("currency")
            .map(str::to_ascii_uppercase)
            .filter(|c| CURRENCIES.contains(&c.as_str())),
        "currency",
        "invoice-problem-currency",
    );
    let as_currency = currency.as_deref().unwrap_or("EUR");
    let amount = problems.unless(
        values
            .get("amount")
            .and_then(|a| minor_units(a, as_currency))
            .filter(|m| *m > 0 && *m <= 100_000_000_000),
        "amount",
        "invoice-problem-amount",
    );
    let due = problems.unless(
        text("due_date").filter(|d| is_date_from_today(d)),
        "due_date",
        "invoice-problem-due-date",
    );
    let description = problems.unless(
        description(values.get("description")),
        "description",
        "invoice-problem-description",
    );
    match (email, name, amount, currency, due, description) {
        (Some(email), Some(name), Some(amount), Some(currency), Some(due), Some(description)) => {
            Ok(NewInvoice {
                customer_email: email.to_owned(),
                customer_name: name.to_owned(),
                amount_minor: amount,
                currency,
                due_date: due.to_owned(),
                description,
            })
        }
        _ => Err(problems.0),
    }
}

/// The problems found so far.
#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    /// `value`, or a problem with `field` when there is none.
    fn unless<T>(
        &mut self,
        value: Option<T>,
        field: &'static str,
        message: &'static str,
    ) -> Option<T> {
        if value.is_none() {
            self.0.push(Problem { field, message });
        }
        value
    }
}

/// The optional description: absent, or a string of at most [`MAX_DESCRIPTION`] characters (`None`: neither).
fn description(value: Option<&Value>) -> Option<Option<String>> {
    match value {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(d)) if d.chars().count() <= MAX_DESCRIPTION => {
            Some(Some(d.trim().to_owned()).filter(|d| !d.is_empty()))
        }
        Some(_) => None,
    }
}

/// A pragmatic address check: one `@`, something before it, a dotted domain after it, no
/// spaces. Delivery is the only real test; this catches typing slips.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && text.len() <= 254
        && !text.contains(char::is_whitespace)
        && !domain.contains('@')
        && domain.split('.').count() >= 2
        && domain.split('.').all(|label| !label.is_empty())
}

fn is_date_from_today(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return false;
    };
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (year.parse(), month.parse::<u8>(), day.parse()) else {
        return false;
    };
    let Ok(month) = time::Month::try_from(month) else {
        return false;
    };
    let Ok(date) = time::Date::from_calendar_date(year, month, day) else {
        return false;
    };
    let today = time::OffsetDateTime::from_unix_timestamp(unix_now())
        .map(|t| t.date())
        .unwrap_or(date);
    date >= today
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(json: Value) -> Map<String, Value> {
        json.as_object().unwrap().clone()
    }

    fn good() -> Value {
        json!({"email": "ap@acme.example", "customer_name": "Acme", "amount": "120.5",
            "currency": "eur", "due_date": "2099-01-31", "description": "Consulting"})
    }

    #[test]
    fn a_valid_draft_becomes_an_invoice() {
        let invoice = validate(&values(good())).unwrap();
        assert_eq!(invoice.amount_minor, 12050);
        assert_eq!(invoice.currency, "EUR");
        assert_eq!(invoice.description.as_deref(), Some("Consulting"));
    }

    #[test]
    fn each_bad_field_is_named_once_with_its_message() {
        let mut bad = good();
        bad["email"] = json!("not-an-email");
        bad["amount"] = json!(-3);
        bad["due_date"] = json!("2001-01-01");
        let problems = validate(&values(bad)).unwrap_err();
        let fields: Vec<&str> = problems.iter().map(|p| p.field).collect();
        assert_eq!(fields, ["email", "amount", "due_date"]);
        assert_eq!(problems[0].text(Lang::En), "Enter a valid email address.");
        assert_eq!(
            problems[0].text(Lang::De),
            "Geben Sie eine gültige E-Mail-Adresse ein."
        );
        let missing = validate(&Map::new()).unwrap_err();
        let fields: Vec<&str> = missing.iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            ["email", "customer_name", "currency", "amount", "due_date"]
        );
    }

    #[test]
    fn emails_amounts_and_currencies_are_checked_like_a_person_would() {
        for email in ["a@b.co", "first.last+tag@sub.example.org"] {
            assert!(is_email(email), "{email}");
        }
        for email in ["a@b", "@b.co", "a b@c.de", "a@@b.co", "a@b..co", ""] {
            assert!(!is_email(email), "{email}");
        }
        let mut yen = good();
        yen["currency"] = json!("JPY");
        yen["amount"] = json!("1000.5");
        assert_eq!(validate(&values(yen)).unwrap_err()[0].field, "amount");
    }
}
