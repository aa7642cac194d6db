//! The UploadArtifact tool: copy a file the agent produced (a report, a screenshot, a log)
//! into the run's artifacts directory, where CI collects it; result.json lists it.
//!
//! Only common report, image and archive types are accepted, at most 50 MB per file and
//! 500 MB per run. The copy keeps the workspace-relative path (uploading the same path
//! again replaces the earlier copy) and is hashed (SHA-256) as it is written.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::paths::resolve_in_workspace;
use super::write::path_tighten;
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, object_schema, str_arg};
use crate::conversation::ToolSpec;
use crate::permissions::Tighten;

/// One uploaded file, as result.json lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ArtifactRecord {
    /// The file's path relative to the workspace (absolute if it lies outside).
    pub path: String,
    /// Where the copy is.
    pub stored: PathBuf,
    pub size: u64,
    /// Hex SHA-256 of the content.
    pub sha256: String,
    /// Its media type, from the file name.
    pub kind: String,
}

pub struct UploadArtifact;

const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
const MAX_RUN_BYTES: u64 = 500 * 1024 * 1024;

/// Accepted file name endings (lowercase) and their media types; longest endings first.
const KINDS: &[(&str, &str)] = &[
    (".tar.gz", "application/gzip"),
    (".tgz", "application/gzip"),
    (".txt", "text/plain"),
    (".log", "text/plain"),
    (".out", "text/plain"),
    (".diff", "text/x-diff"),
    (".patch", "text/x-diff"),
    (".json", "application/json"),
    (".jsonl", "application/jsonl"),
    (".ndjson", "application/jsonl"),
    (".sarif", "application/sarif+json"),
    (".xml", "application/xml"),
    (".csv", "text/csv"),
    (".tsv", "text/tab-separated-values"),
    (".html", "text/html"),
    (".htm", "text/html"),
    (".md", "text/markdown"),
    (".yaml", "application/yaml"),
    (".yml", "application/yaml"),
    (".png", "image/png"),
    (".jpg", "image/jpeg"),
    (".jpeg", "image/jpeg"),
    (".gif", "image/gif"),
    (".webp", "image/webp"),
    (".pdf", "application/pdf"),
    (".zip", "application/zip"),
    (".tar", "application/x-tar"),
];

const DESCRIPTION: &str = "Save a file from the workspace as an artifact of this run (a test \
report, a screenshot, a log), so it is kept after the run. Accepted: text, log, json, xml, \
csv, html, markdown, yaml, diff, png, jpg, gif, webp, pdf, zip, tar, tar.gz; at most 50 MB \
per file and 500 MB per run.";

#[async_trait::async_trait]
impl Tool for UploadArtifact {
    fn name(&self) -> &str {
        "UploadArtifact"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "UploadArtifact".into(),
            description: DESCRIPTION.into(),
            parameters: object_schema(&[("filePath", "string", "Path of the file to save.", true)]),
        }
    }

    fn tighten(&self, args: &Value, shared: &ToolShared) -> Option<Tighten> {
        path_tighten(args.get("filePath")?.as_str()?, shared)
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "filePath")?.to_owned();
        let shared = ctx.shared.clone();
        tokio::task::spawn_blocking(move || upload(&raw, &shared))
            .await
            .map_err(|e| ToolError::Fatal(format!("upload task failed: {e}")))?
    }
}

fn kind_of(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    KINDS
        .iter()
        .find(|(ending, _)| name.ends_with(ending))
        .map(|&(_, kind)| kind)
}

/// The file at `path` if it may be uploaded: a regular file of an accepted type within the
/// per-file limit. Returns it opened, with its size and media type.
fn check_file(raw: &str, path: &Path) -> Result<(std::fs::File, u64, &'static str), ToolError> {
    let respond = ToolError::RespondToModel;
    let meta =
        std::fs::metadata(path).map_err(|_| respond(format!("File does not exist: {raw}")))?;
    if !meta.is_file() {
        return Err(respond(format!("{raw} is not a regular file")));
    }
    let kind = kind_of(path).ok_or_else(|| {
        respond(format!(
            "{raw} is not an accepted artifact type. Accepted endings: {}. Rename the file or \
             pack it into a .zip or .tar.gz.",
            KINDS.iter().map(|(e, _)| *e).collect::<Vec<_>>().join(" ")
        ))
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(respond(format!(
            "{raw} has {} bytes; artifacts may have at most {MAX_FILE_BYTES} bytes (50 MB). \
             Compress it or upload a smaller excerpt.",
            meta.len()
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| respond(format!("Cannot open {raw}: {e}")))?;
    Ok((file, meta.len(), kind))
}

fn upload(raw: &str, shared: &ToolShared) -> Result<ToolOutput, ToolError> {
    let respond = ToolError::RespondToModel;
    let path = resolve_in_workspace(&shared.workspace, raw).real;
    let (file, len, kind) = check_file(raw, &path)?;
    let rel = match path.strip_prefix(&shared.workspace) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => Path::new("outside-workspace").join(path.file_name().unwrap_or_default()),
    };
    let shown = path
        .strip_prefix(&shared.workspace)
        .map_or_else(|_| path.display().to_string(), |r| r.display().to_string());
    let mut records = shared.artifacts_mut();
    let used: u64 = records
        .iter()
        .filter(|r| r.path != shown)
        .map(|r| r.size)
        .sum();
    if used + len > MAX_RUN_BYTES {
        return Err(respond(format!(
            "Uploading {raw} ({len} bytes) would exceed the run's artifact limit of \
             {MAX_RUN_BYTES} bytes (500 MB); {used} bytes are already uploaded."
        )));
    }
    let stored = shared.artifacts_dir.join(&rel);
    let (size, sha256) = copy_hashed(file, &stored)
        .map_err(|e| ToolError::Fatal(format!("cannot copy {raw} to {}: {e}", stored.display())))?
        .ok_or_else(|| {
            respond(format!(
                "{raw} grew past {MAX_FILE_BYTES} bytes while it was copied"
            ))
        })?;
    let record = ArtifactRecord {
        path: shown.clone(),
        stored,
        size,
        sha256,
        kind: kind.to_owned(),
    };
    records.retain(|r| r.path != shown);
    records.push(record);
    Ok(ToolOutput::text(format!(
        "Uploaded {shown} as an artifact ({size} bytes, {kind})."
    )))
}

/// Copy `src` to `to` (atomically) and hash it; `None` when it exceeds the per-file limit.
fn copy_hashed(mut src: std::fs::File, to: &Path) -> std::io::Result<Option<(u64, String)>> {
    let dir = to.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".upload-")
        .tempfile_in(dir)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        if size > MAX_FILE_BYTES {
            return Ok(None);
        }
        hasher.update(&buf[..n]);
        tmp.write_all(&buf[..n])?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(to).map_err(|e| e.error)?;
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Some((size, hex)))
}
