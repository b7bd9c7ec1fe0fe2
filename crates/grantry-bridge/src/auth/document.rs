//! The bridge's own Client ID Metadata Document, as a grantry deployment serves it: an
//! authorization server that accepts such documents fetches it from the URL the bridge gives
//! as its client id (`--client-metadata-url`), so the bridge needs no registration there.

use serde_json::{Value, json};

use super::loopback;

/// Where grantry serves the document, under its public URL.
pub const PATH: &str = "/bridge/client-metadata.json";

/// The document for a grantry whose public URL is `public_url`: a public native client whose
/// id is the document's own URL, redirected to the loopback listener of any port (RFC 8252).
pub fn client_metadata_document(public_url: &str) -> Value {
    let public_url = public_url.trim_end_matches('/');
    json!({
        "client_id": format!("{public_url}{PATH}"),
        "client_name": "grantry bridge",
        "client_uri": public_url,
        "application_type": "native",
        "redirect_uris": [format!("http://127.0.0.1{}", loopback::PATH)],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_names_itself_and_the_bridges_loopback_redirect() {
        let document = client_metadata_document("https://connector.example.com/");
        assert_eq!(
            document["client_id"],
            "https://connector.example.com/bridge/client-metadata.json"
        );
        assert_eq!(document["redirect_uris"][0], "http://127.0.0.1/callback");
        assert_eq!(document["token_endpoint_auth_method"], "none");
    }
}
