//! Where uploads go: the session URL and the optional diff URL, chosen from `--upload-url`,
//! the job's `upload:` section and the environment, with `{run_id}` filled in.
//!
//! A presigned URL carries its credentials in the query string, so a target never shows
//! one: its `Debug` output and every message built here use [`display_url`] (scheme, host,
//! port and path only).

use std::fmt;

use reqwest::Url;

use super::UploadError;
use crate::job::UploadSpec;

/// The URLs a run's uploads are PUT to.
#[derive(Clone, PartialEq, Eq)]
pub struct UploadTarget {
    pub(crate) session: Url,
    pub(crate) diff: Option<Url>,
}

impl fmt::Debug for UploadTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UploadTarget")
            .field("session", &display_url(&self.session))
            .field("diff", &self.diff.as_ref().map(display_url))
            .finish()
    }
}

impl UploadTarget {
    /// A target from explicit URLs. `{run_id}` in either is replaced by `run_id`; both must
    /// be `http://` or `https://` URLs.
    pub fn new(
        session_url: &str,
        diff_url: Option<&str>,
        run_id: &str,
    ) -> Result<UploadTarget, UploadError> {
        Ok(UploadTarget {
            session: parse("the upload URL", session_url, run_id)?,
            diff: diff_url
                .map(|u| parse("the diff upload URL", u, run_id))
                .transpose()?,
        })
    }

    /// The target of a run: the session URL is `--upload-url` (`cli_url`), else the job's
    /// `upload.url`, else the value of the variable `upload.url_env` names; the diff URL is
    /// `upload.diff_url`, else the variable `upload.diff_url_env` names, else none (only
    /// the session is uploaded). `Ok(None)` when nothing asks for an upload. A named
    /// variable that is unset or empty is an error: the caller warns and runs without
    /// uploads (a fork's pull request, say, gets no secrets).
    pub fn from_job(
        spec: Option<&UploadSpec>,
        cli_url: Option<&str>,
        run_id: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<UploadTarget>, UploadError> {
        let from_env = |what: &'static str, name: &str| {
            env(name)
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| UploadError::MissingEnv {
                    what,
                    name: name.to_owned(),
                })
        };
        let session = match (cli_url, spec) {
            (Some(url), _) => url.to_owned(),
            (None, Some(UploadSpec { url: Some(url), .. })) => url.clone(),
            (
                None,
                Some(UploadSpec {
                    url_env: Some(name),
                    ..
                }),
            ) => from_env("upload.url_env", name)?,
            (None, _) => return Ok(None),
        };
        let diff = match spec {
            Some(UploadSpec {
                diff_url: Some(url),
                ..
            }) => Some(url.clone()),
            Some(UploadSpec {
                diff_url_env: Some(name),
                ..
            }) => Some(from_env("upload.diff_url_env", name)?),
            _ => None,
        };
        UploadTarget::new(&session, diff.as_deref(), run_id).map(Some)
    }

    /// The session URL without its query string.
    pub fn session_display(&self) -> String {
        display_url(&self.session)
    }

    /// The diff URL without its query string.
    pub fn diff_display(&self) -> Option<String> {
        self.diff.as_ref().map(display_url)
    }
}

fn parse(what: &'static str, raw: &str, run_id: &str) -> Result<Url, UploadError> {
    let text = raw.trim().replace("{run_id}", run_id);
    // The URL is never echoed back: it may carry credentials.
    let url = Url::parse(&text).map_err(|e| UploadError::InvalidUrl {
        what,
        reason: format!("not a URL ({e})"),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UploadError::InvalidUrl {
            what,
            reason: format!("must start with http:// or https://, not {}:", url.scheme()),
        });
    }
    if url.host_str().is_none() {
        return Err(UploadError::InvalidUrl {
            what,
            reason: "has no host".to_owned(),
        });
    }
    Ok(url)
}

/// `scheme://host[:port]/path` of `url`: no user name, password, query or fragment, so it
/// is safe to log even for a presigned URL.
pub fn display_url(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port() {
        Some(port) => format!("{}://{host}:{port}{}", url.scheme(), url.path()),
        None => format!("{}://{host}{}", url.scheme(), url.path()),
    }
}

/// Whether a presigned URL signed the server-side-encryption header, so the PUT must send
/// `x-amz-server-side-encryption: AES256` or the signature does not match.
pub(crate) fn wants_sse(url: &Url) -> bool {
    url.query_pairs().any(|(name, value)| {
        name.eq_ignore_ascii_case("X-Amz-SignedHeaders")
            && value.split(';').any(|h| {
                h.trim()
                    .eq_ignore_ascii_case("x-amz-server-side-encryption")
            })
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn spec() -> UploadSpec {
        UploadSpec {
            url: None,
            url_env: None,
            diff_url: None,
            diff_url_env: None,
            artifacts_url: None,
            artifacts_url_env: None,
            interval: Duration::from_secs(30),
        }
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "SESSION_URL" => {
                Some("https://bucket.example/s/{run_id}.json?X-Amz-Signature=abc".into())
            }
            "DIFF_URL" => Some("https://bucket.example/d/{run_id}.patch".into()),
            "EMPTY" => Some("  ".into()),
            _ => None,
        }
    }

    #[test]
    fn display_drops_credentials_query_and_fragment() {
        let url = Url::parse("https://user:pw@host.example:8443/a/b.json?X-Amz-Signature=s#f")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(display_url(&url), "https://host.example:8443/a/b.json");
    }

    #[test]
    fn cli_url_wins_and_run_id_is_filled_in() {
        let s = UploadSpec {
            url: Some("https://job.example/x".into()),
            diff_url_env: Some("DIFF_URL".into()),
            ..spec()
        };
        let t = UploadTarget::from_job(Some(&s), Some("http://cli.example/{run_id}"), "r42", env)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("no target"));
        assert_eq!(t.session_display(), "http://cli.example/r42");
        assert_eq!(
            t.diff_display().as_deref(),
            Some("https://bucket.example/d/r42.patch")
        );
    }

    #[test]
    fn env_urls_are_read_and_missing_ones_are_errors() {
        let s = UploadSpec {
            url_env: Some("SESSION_URL".into()),
            ..spec()
        };
        let t = UploadTarget::from_job(Some(&s), None, "r1", env)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("no target"));
        assert_eq!(t.session_display(), "https://bucket.example/s/r1.json");
        assert!(t.diff.is_none());
        assert!(!format!("{t:?}").contains("Signature"));
        for name in ["EMPTY", "UNSET"] {
            let s = UploadSpec {
                url_env: Some(name.into()),
                ..spec()
            };
            let err = UploadTarget::from_job(Some(&s), None, "r1", env);
            assert!(
                matches!(err, Err(UploadError::MissingEnv { name: ref n, .. }) if n == name),
                "{err:?}"
            );
        }
        assert!(matches!(
            UploadTarget::from_job(None, None, "r1", env),
            Ok(None)
        ));
    }

    #[test]
    fn bad_urls_are_refused_without_echoing_them() {
        for raw in ["ftp://h/x?sig=zzz", "not a url sig=zzz", "file:///tmp/x"] {
            let err = UploadTarget::new(raw, None, "r").map(|_| ());
            let text = err.map_err(|e| e.to_string()).err().unwrap_or_default();
            assert!(!text.is_empty(), "{raw} accepted");
            assert!(!text.contains("zzz"), "{text}");
        }
    }

    #[test]
    fn sse_only_when_signed() {
        let yes = Url::parse(
            "https://b.example/k?X-Amz-SignedHeaders=host%3Bx-amz-server-side-encryption&X-Amz-Signature=1",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let no = Url::parse("https://b.example/k?X-Amz-SignedHeaders=host")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(wants_sse(&yes));
        assert!(!wants_sse(&no));
    }
}
