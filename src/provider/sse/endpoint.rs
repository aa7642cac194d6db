//! The client side both streaming providers share: one endpoint (URL, headers with the key,
//! the HTTP client), posting a body again while the provider can adjust it after a refusal,
//! sorting the reply into a stream or a whole JSON body (a web page or an error object is an
//! error), and reading one event's JSON. The providers keep only what differs: the URL path,
//! how the key is sent, the request body and how an event is read.

use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::classify::{classify, error_in_json};
use super::http::{self, MAX_RESPONSE_BYTES};
use crate::provider::{ChatRequest, Connection, ProviderError};
use crate::secret::Secret;

/// One model endpoint: what every request of a provider client carries.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    http: reqwest::Client,
    pub(crate) url: String,
    headers: HeaderMap,
    model: String,
    key: Option<Secret>,
}

/// A successful reply: a stream to decode, or a whole JSON body that is no error object.
pub(crate) enum Reply {
    Stream(reqwest::Response),
    Json(Value),
}

impl Endpoint {
    /// The endpoint with `Accept: text/event-stream`, the job's headers and no key header
    /// yet (the provider adds it: see [`Endpoint::set_key_header`]). An empty key is none.
    /// `path` is below the connection's `api_base` (`chat/completions`, `v1/messages`).
    pub(crate) fn new(settings: Connection, path: &str) -> Result<Self, ProviderError> {
        let url = http::endpoint(&settings.api_base, path)?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        http::add_headers(&mut headers, &settings.headers)?;
        Ok(Endpoint {
            http: http::build_client(
                settings.connect_timeout,
                settings.request_timeout,
                &settings.api_base,
            )?,
            url,
            headers,
            model: settings.model,
            key: settings.api_key.filter(|key| !key.is_empty()),
        })
    }

    /// A header every request carries unless the job set its own value.
    pub(crate) fn default_header(&mut self, name: &'static str, value: &'static str) {
        self.headers
            .entry(HeaderName::from_static(name))
            .or_insert(HeaderValue::from_static(value));
    }

    /// Sends the key (when there is one) as `name: prefix KEY`, marked sensitive.
    pub(crate) fn set_key_header(
        &mut self,
        name: HeaderName,
        prefix: &str,
    ) -> Result<(), ProviderError> {
        if let Some(key) = &self.key {
            let value = http::sensitive(&format!("{prefix}{}", key.expose()))?;
            self.headers.insert(name, value);
        }
        Ok(())
    }

    pub(crate) fn key(&self) -> Option<&Secret> {
        self.key.as_ref()
    }

    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    /// The model a request names, or the endpoint's own.
    pub(crate) fn model_for<'r>(&'r self, request: &'r ChatRequest<'_>) -> &'r str {
        if request.model.is_empty() {
            &self.model
        } else {
            &request.model
        }
    }

    /// Posts the body `body()` makes; after a refusal for which `adjust` returns true (the
    /// provider changed what it sends), posts once more with a fresh body.
    pub(crate) async fn post(
        &self,
        mut body: impl FnMut() -> Result<Vec<u8>, ProviderError>,
        mut adjust: impl FnMut(&ProviderError) -> bool,
    ) -> Result<Reply, ProviderError> {
        let response = loop {
            let key = self.key.as_ref();
            match http::post(&self.http, &self.url, self.headers.clone(), body()?, key).await {
                Ok(response) => break response,
                Err(error) if adjust(&error) => {}
                Err(error) => return Err(error),
            }
        };
        self.reply(response).await
    }

    /// Sorts a successful response: a web page and a JSON error object are errors.
    async fn reply(&self, response: reqwest::Response) -> Result<Reply, ProviderError> {
        let key = self.key.as_ref();
        let kind = http::content_type(&response);
        if http::is_html(&kind) {
            return Err(http::html_page_error(response, key).await);
        }
        if !kind.starts_with("application/json") {
            return Ok(Reply::Stream(response));
        }
        let body = http::read_body(response, MAX_RESPONSE_BYTES, key, false).await?;
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| ProviderError::Decode(format!("the JSON response is invalid: {e}")))?;
        match error_in_json(&value) {
            Some(info) => Err(classify(200, &info, None, key)),
            None => Ok(Reply::Json(value)),
        }
    }
}

/// One stream event's data as JSON (`what` names it in errors: "chunk", "event"); an error
/// object in the stream is the classified error.
pub(crate) fn event_json(
    data: &str,
    what: &str,
    key: Option<&Secret>,
) -> Result<Value, ProviderError> {
    let value: Value = serde_json::from_str(data)
        .map_err(|e| super::not_a_stream::data_error(data, what, &e.to_string(), key))?;
    match error_in_json(&value) {
        Some(info) => Err(classify(200, &info, None, key)),
        None => Ok(value),
    }
}
