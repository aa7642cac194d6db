//! The run store: run folders kept in object storage (S3 and S3-compatible, Google Cloud
//! Storage, Azure Blob) or a local path, under the run's id, so a run's results outlive
//! the machine or pod it ran on and a run can be resumed anywhere.
//!
//! - Where: `--store URL` or `store:` in the job. `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`,
//!   `az://CONTAINER/PREFIX` (or the `azure://`, `abfs://` and `https://` forms the
//!   `object_store` crate reads), `file:///PATH` or a plain path. A run's files go to
//!   `PREFIX/RUN_ID/NAME`.
//! - Credentials: never in the URL or the job file; each cloud's standard chain, as the
//!   `object_store` builders read it from the environment (`AWS_*` with web identity and
//!   instance or pod roles; `GOOGLE_*` and workload identity; `AZURE_*` with workload
//!   identity and managed identity). `AWS_ENDPOINT_URL` names an S3-compatible server.
//! - What: a copier of the run folder ([`sync`]): events.jsonl and session.jsonl while the
//!   run goes, everything else at its end, each file masked by the run's redactor first.
//!   It is never a second source: every output is still a fold of events.jsonl.

mod archive;
mod fetch;
mod runs;
mod sync;

use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, ObjectStoreScheme, PutPayload};

/// The builder of a cloud store at `url`: credentials from the environment's standard
/// chain, the bucket and path from the URL, two retries (the builders share no trait).
macro_rules! from_env {
    ($builder:ty, $url:expr) => {
        <$builder>::from_env().with_url($url).with_retry(retry())
    };
}

pub use archive::{is_archive, unpack};
pub use fetch::download;
pub use runs::{StoredRun, list_runs};
pub use sync::{DiffSource, StoreHandle, StoreStatus, StoreSync};

/// What can go wrong with a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("`{url}` is not a store URL: {why}")]
    Url { url: String, why: String },
    #[error("store {store}: {source}")]
    Backend {
        store: String,
        source: object_store::Error,
    },
    #[error("store {store} has no run `{run}`")]
    NoRun { store: String, run: String },
    #[error("cannot write {}: {source}", .path.display())]
    Local {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot unpack {}: {why}", .path.display())]
    Archive {
        path: std::path::PathBuf,
        why: String,
    },
}

/// One store: where it is and the prefix run folders go under.
#[derive(Clone)]
pub struct RunStore {
    inner: Arc<dyn ObjectStore>,
    prefix: StorePath,
    /// The URL as given (it holds no credential).
    url: String,
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RunStore({})", self.url)
    }
}

impl RunStore {
    /// The store `url` names, with credentials from the environment's standard chain.
    pub fn open(url: &str) -> Result<RunStore, StoreError> {
        let bad = |why: String| StoreError::Url {
            url: url.to_owned(),
            why,
        };
        check_url(url).map_err(bad)?;
        if !url.contains("://") {
            return Self::local(url, url);
        }
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(e.to_string()))?;
        let (scheme, prefix) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad(e.to_string()))?;
        let built = |e: object_store::Error| bad(e.to_string());
        let inner: Arc<dyn ObjectStore> = match scheme {
            ObjectStoreScheme::Local => return Self::local(parsed.path(), url),
            ObjectStoreScheme::AmazonS3 => Arc::new(s3(url).map_err(built)?),
            ObjectStoreScheme::GoogleCloudStorage => Arc::new(
                from_env!(GoogleCloudStorageBuilder, url)
                    .build()
                    .map_err(built)?,
            ),
            ObjectStoreScheme::MicrosoftAzure => Arc::new(
                from_env!(MicrosoftAzureBuilder, url)
                    .build()
                    .map_err(built)?,
            ),
            other => return Err(bad(format!("{other:?} is not a store cn-run writes to"))),
        };
        Ok(RunStore {
            inner,
            prefix,
            url: url.trim_end_matches('/').to_owned(),
        })
    }

    fn local(path: &str, url: &str) -> Result<RunStore, StoreError> {
        let dir = std::path::absolute(path).map_err(|source| StoreError::Local {
            path: path.into(),
            source,
        })?;
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Local {
            path: dir.clone(),
            source,
        })?;
        let fs = object_store::local::LocalFileSystem::new_with_prefix(&dir).map_err(|e| {
            StoreError::Url {
                url: url.to_owned(),
                why: e.to_string(),
            }
        })?;
        Ok(RunStore {
            inner: Arc::new(fs.with_automatic_cleanup(true)),
            prefix: StorePath::default(),
            url: url.trim_end_matches('/').to_owned(),
        })
    }

    /// The URL as given, for messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn path(&self, run: &str, name: &str) -> StorePath {
        let mut p = self.prefix.clone().join(run);
        for part in name.split('/') {
            p = p.join(part);
        }
        p
    }

    fn backend(&self, source: object_store::Error) -> StoreError {
        StoreError::Backend {
            store: self.url.clone(),
            source,
        }
    }

    /// Write `name` of run `run`.
    pub async fn put(&self, run: &str, name: &str, body: Vec<u8>) -> Result<(), StoreError> {
        self.inner
            .put(&self.path(run, name), PutPayload::from(body))
            .await
            .map(|_| ())
            .map_err(|e| self.backend(e))
    }

    /// Remove `name` of run `run` (nothing when it is not there).
    pub async fn delete(&self, run: &str, name: &str) -> Result<(), StoreError> {
        match self.inner.delete(&self.path(run, name)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.backend(e)),
        }
    }

    /// Read `name` of run `run` (`None` when it is not there).
    pub async fn get(&self, run: &str, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.inner.get(&self.path(run, name)).await {
            Ok(got) => Ok(Some(
                got.bytes().await.map_err(|e| self.backend(e))?.to_vec(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.backend(e)),
        }
    }
}

/// A request is retried briefly: the copier tries again on its next tick anyway, and a
/// store that cannot be reached must not hold the run's end (the default retries for 3
/// minutes).
fn retry() -> object_store::RetryConfig {
    object_store::RetryConfig {
        max_retries: 2,
        retry_timeout: std::time::Duration::from_secs(10),
        ..object_store::RetryConfig::default()
    }
}

/// An S3 store: the environment's credentials; an `http://` endpoint (a local
/// S3-compatible server) is allowed when it is the one `AWS_ENDPOINT_URL` names.
fn s3(url: &str) -> object_store::Result<object_store::aws::AmazonS3> {
    let mut builder = from_env!(AmazonS3Builder, url);
    let endpoint = std::env::var("AWS_ENDPOINT_URL_S3")
        .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
        .ok();
    if endpoint.is_some_and(|e| e.starts_with("http://")) {
        builder = builder.with_allow_http(true);
    }
    builder.build()
}

/// Schemes a store URL may have (besides a plain path).
const SCHEMES: [&str; 9] = [
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "https", "file",
];

/// Whether `url` can name a store, without opening it: a known scheme (or a plain path),
/// and no credential in it (no user or password, no query string: credentials come from
/// the environment).
pub fn check_url(url: &str) -> Result<(), String> {
    if !url.contains("://") {
        return if url.trim().is_empty() {
            Err("is empty".to_owned())
        } else {
            Ok(())
        };
    }
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("is not a URL: {e}"))?;
    if !SCHEMES.contains(&parsed.scheme()) {
        return Err(format!(
            "`{}://` is not a store; use s3://, gs://, az:// (or azure://, abfs://), file:// or a path",
            parsed.scheme()
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() || parsed.query().is_some() {
        return Err(
            "holds a credential (user, password or query string); credentials come \
             from the environment (AWS_*, GOOGLE_*, AZURE_*), never from the URL"
                .to_owned(),
        );
    }
    Ok(())
}

/// Whether `--resume`'s argument names a run in a store (`SCHEME://…`, not a local path).
pub fn is_store_url(text: &str) -> bool {
    text.split_once("://")
        .is_some_and(|(scheme, _)| !scheme.is_empty() && scheme != "file")
        || text.starts_with("file://")
}

/// `STORE_URL/RUN_ID` split into the store and the run id.
pub fn split_run_url(text: &str) -> Option<(&str, &str)> {
    let trimmed = text.trim_end_matches('/');
    let (store, run) = trimmed.rsplit_once('/')?;
    (!run.is_empty() && store.contains("://") && !store.ends_with('/') && !store.ends_with(':'))
        .then_some((store, run))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_url_splits_into_store_and_run() {
        assert_eq!(
            split_run_url("s3://b/runs/20260101-x"),
            Some(("s3://b/runs", "20260101-x"))
        );
        assert_eq!(split_run_url("s3://b/r1/"), Some(("s3://b", "r1")));
        assert_eq!(split_run_url("s3://bucket"), None);
        assert!(is_store_url("gs://b/r"));
        assert!(is_store_url("file:///tmp/store/r"));
        assert!(!is_store_url("/tmp/run"));
        assert!(!is_store_url(".cn-run/r1"));
    }

    #[test]
    fn a_local_store_is_made_and_takes_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::open(dir.path().join("s").to_str().unwrap()).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            store.put("r1", "a/b.txt", b"hi".to_vec()).await.unwrap();
            assert_eq!(
                store.get("r1", "a/b.txt").await.unwrap(),
                Some(b"hi".to_vec())
            );
            assert_eq!(store.get("r1", "none").await.unwrap(), None);
        });
        assert!(dir.path().join("s/r1/a/b.txt").is_file());
    }

    #[test]
    fn credentials_in_a_store_url_are_refused() {
        for url in [
            "s3://AKIA:secret@bucket/runs",
            "s3://bucket/runs?access_key=x",
            "https://acct.blob.core.windows.net/c?sig=abc",
        ] {
            let why = check_url(url).unwrap_err();
            assert!(why.contains("credential"), "{url}: {why}");
        }
        for url in [
            "s3://bucket/runs",
            "gs://b",
            "az://c/p",
            "/var/runs",
            "file:///x",
        ] {
            check_url(url).unwrap();
        }
    }

    #[test]
    fn an_unknown_scheme_is_refused_in_words() {
        let e = RunStore::open("ftp://host/x").unwrap_err().to_string();
        assert!(e.contains("ftp://host/x"), "{e}");
    }
}
