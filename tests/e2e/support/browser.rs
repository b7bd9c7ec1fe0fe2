//! A scripted browser: keeps cookies, does not follow redirects on its own (so tests see each
//! hop), reads forms out of pages and submits them.

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, LOCATION};

pub struct Browser {
    http: reqwest::Client,
    jar: std::sync::Arc<reqwest::cookie::Jar>,
    /// Every URL requested and every cookie value set: the secrets a log must never show.
    seen: std::sync::Mutex<Seen>,
}

/// What passed through the browser.
#[derive(Default, Clone)]
pub struct Seen {
    pub urls: Vec<String>,
    pub cookie_values: Vec<String>,
}

impl Seen {
    /// Every secret-bearing value: query values named code, state or requestState, the
    /// sealed part of connect links, and cookie values.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = self.cookie_values.clone();
        for url in &self.urls {
            let Ok(parsed) = url::Url::parse(url) else {
                continue;
            };
            for (name, value) in parsed.query_pairs() {
                if matches!(name.as_ref(), "code" | "state" | "nonce" | "code_challenge") {
                    out.push(value.into_owned());
                }
            }
            if let Some(sealed) = parsed.path().strip_prefix("/connect/") {
                out.push(sealed.to_owned());
            }
        }
        out.retain(|v| v.len() >= 8);
        out
    }
}

#[derive(Debug)]
pub struct Page {
    pub url: String,
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    pub fn location(&self) -> Option<String> {
        self.headers
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The first form of the page: its absolute action and fields (hidden and text inputs).
    pub fn form(&self) -> Form {
        let start = self.body.find("<form").expect("page has a form");
        let end = self.body[start..].find("</form>").unwrap() + start;
        let html = &self.body[start..end];
        let action = attr(&html[..html.find('>').unwrap()], "action").unwrap_or_default();
        let action = url::Url::parse(&self.url)
            .unwrap()
            .join(&action)
            .unwrap()
            .to_string();
        let mut fields = Vec::new();
        for input in html.split("<input").skip(1) {
            let tag = &input[..input.find('>').unwrap()];
            if let Some(name) = attr(tag, "name") {
                fields.push((name, attr(tag, "value").unwrap_or_default()));
            }
        }
        Form { action, fields }
    }
}

#[derive(Debug, Clone)]
pub struct Form {
    pub action: String,
    pub fields: Vec<(String, String)>,
}

impl Form {
    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.fields.retain(|(n, _)| n != name);
        self.fields.push((name.to_owned(), value.to_owned()));
        self
    }
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(unescape(&tag[start..end]))
}

fn unescape(text: &str) -> String {
    text.replace("&#38;", "&")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// How a scripted sign-in went, hop by hop.
pub struct SignIn {
    /// The provider authorize URL the connect page sent the browser to.
    pub authorize_url: String,
    /// The callback URL the provider sent the browser back to.
    pub callback_url: String,
    /// The page the callback ended on (after following its redirect).
    pub final_page: Page,
}

impl SignIn {
    /// The sign-in ended on grantry's "Account connected" page, and on nothing else (a refusal
    /// page such as "Account not connected" also says "connected").
    #[track_caller]
    pub fn assert_connected(&self) {
        let page = &self.final_page;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        assert!(
            page.url.contains("/connected?provider="),
            "ended on {}: {}",
            page.url,
            page.body
        );
        assert!(
            page.body.contains("<title>Account connected")
                && page
                    .body
                    .contains("account is connected. Return to your assistant"),
            "not the success page: {}",
            page.body
        );
    }
}

impl Default for Browser {
    fn default() -> Self {
        Self::new()
    }
}

impl Browser {
    pub fn new() -> Self {
        let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
        Self {
            http: reqwest::Client::builder()
                .cookie_provider(jar.clone())
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            jar,
            seen: Default::default(),
        }
    }

    /// The cookies this browser would send to `url`, as `(name, value)`.
    pub fn cookies(&self, url: &str) -> Vec<(String, String)> {
        use reqwest::cookie::CookieStore as _;
        let header = self.jar.cookies(&url.parse().unwrap());
        let text = header.as_ref().map(|h| h.to_str().unwrap()).unwrap_or("");
        text.split("; ")
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect()
    }

    pub async fn get(&self, url: &str) -> Page {
        self.get_with(url, &[]).await
    }

    /// A GET with these headers too (a foreign `Host`, say).
    pub async fn get_with(&self, url: &str, headers: &[(&str, &str)]) -> Page {
        let mut request = self.http.get(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let r = request.send().await.unwrap();
        self.page(url, r).await
    }

    /// What this browser has seen so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }

    pub async fn submit(&self, form: &Form) -> Page {
        self.submit_with(form, &[]).await
    }

    pub async fn submit_with(&self, form: &Form, headers: &[(&str, &str)]) -> Page {
        let mut request = self.http.post(&form.action).form(&form.fields);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let r = request.send().await.unwrap();
        self.page(&form.action, r).await
    }

    async fn page(&self, url: &str, r: reqwest::Response) -> Page {
        {
            let mut seen = self.seen.lock().unwrap();
            seen.urls.push(url.to_owned());
            for cookie in r.cookies() {
                seen.cookie_values.push(cookie.value().to_owned());
            }
            if let Some(location) = r.headers().get(LOCATION).and_then(|v| v.to_str().ok()) {
                seen.urls.push(location.to_owned());
            }
            let latest = Seen {
                urls: seen.urls[seen.urls.len().saturating_sub(2)..].to_vec(),
                cookie_values: r.cookies().map(|c| c.value().to_owned()).collect(),
            };
            super::leaks::record("browser", latest.secrets().iter().map(String::as_str));
        }
        Page {
            url: url.to_owned(),
            status: r.status(),
            headers: r.headers().clone(),
            body: r.text().await.unwrap(),
        }
    }

    /// Continue on the connect page; returns the provider authorize URL it redirected to.
    pub async fn continue_at(&self, link: &str) -> String {
        let page = self.get(link).await;
        assert_eq!(page.status, StatusCode::OK, "connect page: {}", page.body);
        let sent = self.submit(&page.form()).await;
        assert_eq!(
            sent.status,
            StatusCode::SEE_OTHER,
            "continue: {}",
            sent.body
        );
        sent.location().expect("continue redirects to the provider")
    }

    /// At the demo provider's consent page, approve (or deny); returns the callback URL.
    pub async fn decide_at_provider(&self, authorize_url: &str, approve: bool) -> String {
        self.decide_as(authorize_url, decision(approve), None).await
    }

    /// At the demo's consent page, as the demo user `user` (else the one proposed).
    async fn decide_as(&self, authorize_url: &str, decision: &str, user: Option<&str>) -> String {
        let consent = self.get(authorize_url).await;
        assert_eq!(
            consent.status,
            StatusCode::OK,
            "consent page: {}",
            consent.body
        );
        let mut form = consent.form().with("decision", decision);
        if let Some(user) = user {
            form = form.with("user", user);
        }
        let back = self.submit(&form).await;
        assert_eq!(
            back.status,
            StatusCode::SEE_OTHER,
            "decision: {}",
            back.body
        );
        back.location().expect("the provider redirects back")
    }

    /// The whole browser side of a sign-in from the connect link.
    pub async fn sign_in(&self, link: &str, approve: bool) -> SignIn {
        self.sign_in_with(link, decision(approve), None).await
    }

    /// A sign-in from the connect link as the demo user `user`: an account of its own.
    pub async fn sign_in_as(&self, link: &str, user: &str) -> SignIn {
        self.sign_in_with(link, "approve", Some(user)).await
    }

    /// A sign-in answering the demo's consent page with the button `decision`
    /// (`approve_read`: "Allow reading only").
    pub async fn sign_in_deciding(&self, link: &str, decision: &str) -> SignIn {
        self.sign_in_with(link, decision, None).await
    }

    async fn sign_in_with(&self, link: &str, decision: &str, user: Option<&str>) -> SignIn {
        let authorize_url = self.continue_at(link).await;
        let callback_url = self.decide_as(&authorize_url, decision, user).await;
        let mut final_page = self.get(&callback_url).await;
        if final_page.status == StatusCode::SEE_OTHER {
            let next = url::Url::parse(&callback_url)
                .unwrap()
                .join(&final_page.location().unwrap())
                .unwrap();
            final_page = self.get(next.as_str()).await;
        }
        SignIn {
            authorize_url,
            callback_url,
            final_page,
        }
    }
}

/// The consent page's button for approving or denying.
fn decision(approve: bool) -> &'static str {
    if approve { "approve" } else { "deny" }
}
