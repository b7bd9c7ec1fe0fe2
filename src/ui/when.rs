//! Moments as a person reads them: the date and time in their language's words and order
//! (`5 December 2026, 14:03 UTC`, `5. Dezember 2026, 14:03 UTC`, `5 décembre 2026 à 14:03
//! UTC`), with the RFC 3339 form beside it for machines (`<time datetime>`). In UTC, said so:
//! a page without JavaScript does not know the reader's time zone.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Lang;

/// A moment, for a page to show in a `<time>` element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moment {
    /// RFC 3339 in UTC, for `datetime`.
    pub(crate) datetime: String,
    /// The date and time in the reader's words.
    pub(crate) text: String,
}

/// The moment `unix` (seconds) as a reader of `lang` reads it.
pub(crate) fn moment(lang: Lang, unix: i64) -> Moment {
    let Ok(at) = OffsetDateTime::from_unix_timestamp(unix) else {
        let text = unix.to_string();
        return Moment {
            datetime: String::new(),
            text,
        };
    };
    let day = if at.day() == 1 {
        lang.t("date-first-of-month")
    } else {
        at.day().to_string()
    };
    let month = lang.t(&format!("date-month-{}", u8::from(at.month())));
    let text = lang.t_with(
        "date-time",
        &[
            ("day", &day),
            ("month", &month),
            ("year", &at.year().to_string()),
            ("time", &format!("{:02}:{:02}", at.hour(), at.minute())),
        ],
    );
    Moment {
        datetime: at.format(&Rfc3339).unwrap_or_default(),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_says_a_moment_its_own_way() {
        // 2026-12-05T14:03:09Z and 2026-01-01T00:00:00Z.
        let (december, new_year) = (1_796_479_389, 1_767_225_600);
        assert_eq!(
            moment(Lang::En, december).text,
            "5 December 2026, 14:03 UTC"
        );
        assert_eq!(
            moment(Lang::De, december).text,
            "5. Dezember 2026, 14:03 UTC"
        );
        assert_eq!(
            moment(Lang::Fr, december).text,
            "5 décembre 2026 à 14:03 UTC"
        );
        assert_eq!(moment(Lang::En, new_year).text, "1 January 2026, 00:00 UTC");
        assert_eq!(moment(Lang::De, new_year).text, "1. Januar 2026, 00:00 UTC");
        assert_eq!(
            moment(Lang::Fr, new_year).text,
            "1er janvier 2026 à 00:00 UTC"
        );
        assert_eq!(moment(Lang::Fr, december).datetime, "2026-12-05T14:03:09Z");
    }

    #[test]
    fn every_month_has_its_name_in_every_language() {
        for lang in Lang::ALL {
            let mut names = std::collections::BTreeSet::new();
            for month in 1..=12 {
                let name = lang.own(&format!("date-month-{month}"), &[]).unwrap();
                assert!(!name.is_empty() && names.insert(name), "{}", lang.tag());
            }
        }
    }
}
