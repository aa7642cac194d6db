//! Bringing a run folder out of a store onto this machine (`--resume STORE/RUN`), whole,
//! into a new local folder: what was there locally is never overwritten.

use std::path::Path;

use super::{RunStore, StoreError, runs::objects};

/// Download every file of run `id` into `dest` (made now; it must not exist). Returns how
/// many files came.
pub async fn download(store: &RunStore, id: &str, dest: &Path) -> Result<usize, StoreError> {
    let names = objects(store, id).await?;
    if !names
        .iter()
        .any(|n| n == "session.jsonl" || n == "events.jsonl")
    {
        return Err(StoreError::NoRun {
            store: store.url().to_owned(),
            run: id.to_owned(),
        });
    }
    let local = |path: &Path, source| StoreError::Local {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dest.parent().unwrap_or(Path::new("."))).map_err(|e| local(dest, e))?;
    std::fs::create_dir(dest).map_err(|e| local(dest, e))?;
    for name in &names {
        // Store paths have no `..` or empty parts (object_store refuses them).
        let path = dest.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| local(parent, e))?;
        }
        let body = store.get(id, name).await?.unwrap_or_default();
        crate::out_file::write_whole(&path, &[&body]).map_err(|e| local(&path, e))?;
    }
    Ok(names.len())
}
