//! The UploadArtifact tool: copy a file the agent produced (a report, a screenshot, a log)
//! into the run's artifacts directory, where CI collects it; result.json lists it.
//!
//! Only common report, image and archive types are accepted, at most 50 MB per file and
//! 500 MB per run. The copy keeps the workspace-relative path (uploading the same path
//! again replaces the earlier copy) and is hashed (SHA-256) as it is written. The file is
//! opened through the file tools' one view (`tools::view`), without following a symlink,
//! and copied from that descriptor: what was checked is what is copied.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::grant::Grant;
use super::view::shown;
use super::{Tool, ToolContext, ToolError, ToolOutput, ToolShared, str_arg};
use crate::catalog;
pub use crate::events::ArtifactRecord;

super::catalogued!(pub struct UploadArtifact => catalog::UPLOAD_ARTIFACT);

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

#[async_trait::async_trait]
impl Tool for UploadArtifact {
    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = str_arg(&args, "filePath")?.to_owned();
        ctx.blocking("upload", move |shared, grant| upload(&raw, shared, grant))
            .await
    }
}

fn kind_of(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    KINDS
        .iter()
        .find(|(ending, _)| name.ends_with(ending))
        .map(|&(_, kind)| kind)
}

/// The file `raw` names if it may be uploaded: a regular file of an accepted type within
/// the per-file limit. Returns it opened, with where it is, its size and media type.
fn check_file(
    shared: &ToolShared,
    grant: &Grant,
    raw: &str,
) -> Result<(std::fs::File, PathBuf, u64, &'static str), ToolError> {
    let respond = ToolError::RespondToModel;
    let (file, path) = super::read::open_checked(shared, grant, raw)?;
    let meta = file
        .metadata()
        .map_err(|e| respond(format!("Cannot read {raw}: {e}")))?;
    if !meta.is_file() {
        return Err(respond(format!("{raw} is not a regular file")));
    }
    let kind = kind_of(&path).ok_or_else(|| {
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
    Ok((file, path, meta.len(), kind))
}

fn upload(raw: &str, shared: &ToolShared, grant: &Grant) -> Result<ToolOutput, ToolError> {
    let respond = ToolError::RespondToModel;
    let (file, path, len, kind) = check_file(shared, grant, raw)?;
    let rel = match path.strip_prefix(&shared.workspace) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => Path::new("outside-workspace").join(path.file_name().unwrap_or_default()),
    };
    let shown = shown(shared, &path);
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
    let mut tmp = crate::out_file::WholeFile::create(to)?;
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
        tmp.file_mut().write_all(&buf[..n])?;
    }
    tmp.commit()?;
    let hex = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Some((size, hex)))
}
