//! cn-run's file tools and a folder swapped for a symlink while they run: each call is
//! judged as the dispatcher judges it (`Tool::judge`, then run with that grant) while
//! another thread swaps a folder (or the file itself) of its path for a symlink to an
//! outside folder and back, in a tight loop, for a few hundred calls. Nothing is written,
//! read, listed, searched or copied outside. The controls: the same swap defeats a check
//! that resolves the path and then uses it by name (the way the tools worked before), and
//! each tool does reach its own file when nothing is swapped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cn_run::tools::{
    Edit, Grant, List, MultiEdit, Read, Search, Tool, ToolContext, ToolLimits, ToolShared,
    UploadArtifact, Write, resolve_in_workspace,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const CALLS: usize = 300;
const SECRET: &str = "OUTSIDE-SECRET-7f3a9c";

struct Scene {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    artifacts: PathBuf,
}

/// A workspace with `d/` (and `d/sub/`) holding `f.txt`, and an outside folder holding
/// the same names with a secret in them.
fn scene() -> Scene {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, outside, artifacts) = (
        root.join("ws"),
        root.join("outside"),
        root.join("artifacts"),
    );
    for dir in [ws.join("d/sub"), outside.join("sub")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(ws.join("d/f.txt"), "inside text\n").unwrap();
    std::fs::write(ws.join("d/sub/f.txt"), "inside text\n").unwrap();
    for f in ["f.txt", "sub/f.txt", "report.txt"] {
        std::fs::write(outside.join(f), format!("{SECRET}\n")).unwrap();
    }
    std::fs::write(ws.join("d/report.txt"), "inside report\n").unwrap();
    Scene {
        _tmp: tmp,
        ws,
        outside,
        artifacts,
    }
}

fn ctx(scene: &Scene) -> ToolContext {
    let shared = ToolShared::new(
        scene.ws.clone(),
        vec![],
        CancellationToken::new(),
        ToolLimits::default(),
        scene.artifacts.clone(),
    );
    ToolContext::new(Arc::new(shared), 1, "c1")
}

/// Judges `args` as the dispatcher does and runs the call with that grant (nothing
/// lifted unless the judgement had no objection). `None` when the check refused it.
async fn call(tool: &dyn Tool, args: &Value, base: &ToolContext) -> Option<String> {
    let judged = tool.judge(args, &base.shared);
    if judged.tighten.is_some() {
        return None;
    }
    let mut ctx = base.clone();
    ctx.grant = Grant::of_allowed(judged);
    Some(match tool.run(args.clone(), &ctx).await {
        Ok(out) => out.content,
        Err(e) => e.to_string(),
    })
}

/// Swaps `ws/<name>` between the real folder and a symlink to `target` until stopped;
/// counts the swaps.
fn swapper(
    ws: &Path,
    name: &str,
    target: &Path,
    stop: Arc<AtomicBool>,
) -> (std::thread::JoinHandle<()>, Arc<AtomicUsize>) {
    let (link, real, target) = (
        ws.join(name),
        ws.join(format!("{name}.real")),
        target.to_path_buf(),
    );
    let swaps = Arc::new(AtomicUsize::new(0));
    let count = swaps.clone();
    let handle = std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if std::fs::rename(&link, &real).is_ok() {
                let _ = std::os::unix::fs::symlink(&target, &link);
                count.fetch_add(1, Ordering::Relaxed);
                std::thread::yield_now();
                let _ = std::fs::remove_file(&link);
                if std::fs::rename(&real, &link).is_err() {
                    // A write that came between the two steps made `name` a real folder of
                    // its own (inside the workspace): drop it so that the swaps go on.
                    let _ = std::fs::remove_dir_all(&link);
                    let _ = std::fs::rename(&real, &link);
                }
            }
        }
    });
    (handle, swaps)
}

/// Runs `calls` tool calls while `ws/<name>` is swapped for a symlink to the outside folder.
async fn race(
    scene: &Scene,
    name: &str,
    target: &Path,
    tool: &dyn Tool,
    args: impl Fn(usize) -> Value,
) -> Vec<String> {
    let base = ctx(scene);
    let stop = Arc::new(AtomicBool::new(false));
    let (handle, swaps) = swapper(&scene.ws, name, target, stop.clone());
    // On a loaded machine the swapper may not be scheduled before the calls end:
    // start calling only once it has swapped at least once, so every round races.
    while swaps.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    let mut outputs = Vec::new();
    for i in 0..CALLS {
        if let Some(out) = call(tool, &args(i), &base).await {
            outputs.push(out);
        }
    }
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert!(
        swaps.load(Ordering::Relaxed) > 0,
        "the folder was never swapped"
    );
    outputs
}

fn outside_files(outside: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(outside)
        .iter()
        .map(|p| p.strip_prefix(outside).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

const BEFORE: [&str; 3] = ["f.txt", "report.txt", "sub/f.txt"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_through_a_folder_swapped_for_a_symlink_never_land_outside() {
    let s = scene();
    let outside = s.outside.clone();
    race(
        &s,
        "d",
        &outside,
        &Write,
        |i| json!({"filepath": format!("d/new-{i}.txt"), "content": "x"}),
    )
    .await;
    race(
        &s,
        "d",
        &outside,
        &Write,
        |i| json!({"filepath": format!("d/sub/deep-{i}/n.txt"), "content": "x"}),
    )
    .await;
    race(
        &s,
        "d",
        &outside,
        &Write,
        |_| json!({"filepath": "d/f.txt", "content": "overwritten"}),
    )
    .await;
    assert_eq!(outside_files(&s.outside), BEFORE, "a write landed outside");
    assert_eq!(
        std::fs::read_to_string(s.outside.join("f.txt")).unwrap(),
        format!("{SECRET}\n")
    );
    // The control of this payload is deterministic: see
    // `a_swap_between_the_check_and_the_use_fails_the_call_for_every_tool`.
}

/// Swaps `ws/d` for a symlink to the outside folder now.
fn swap(s: &Scene) {
    std::fs::rename(s.ws.join("d"), s.ws.join("d.real")).unwrap();
    std::os::unix::fs::symlink(&s.outside, s.ws.join("d")).unwrap();
}

#[tokio::test]
async fn a_swap_between_the_check_and_the_use_fails_the_call_for_every_tool() {
    let cases: Vec<(&dyn Tool, Value)> = vec![
        (&Write, json!({"filepath": "d/new.txt", "content": "x"})),
        (&Write, json!({"filepath": "d/f.txt", "content": "x"})),
        (
            &Write,
            json!({"filepath": "d/sub/new/deeper.txt", "content": "x"}),
        ),
        (
            &Edit,
            json!({"file_path": "d/f.txt", "old_string": "text", "new_string": "x"}),
        ),
        (
            &MultiEdit,
            json!({"file_path": "d/sub/f.txt", "edits": [{"old_string": "text", "new_string": "x"}]}),
        ),
        (&Read, json!({"filepath": "d/f.txt"})),
        (&Read, json!({"filepath": "d/sub/f.txt"})),
        (&List, json!({"dirpath": "d"})),
        (&List, json!({"dirpath": "d/sub"})),
        (&Search, json!({"pattern": "SECRET", "path": "d"})),
        (&Search, json!({"pattern": "SECRET", "path": "d/f.txt"})),
        (&UploadArtifact, json!({"filePath": "d/report.txt"})),
    ];
    for (tool, args) in cases {
        let s = scene();
        let base = ctx(&s);
        for f in ["d/f.txt", "d/sub/f.txt"] {
            call(&Read, &json!({"filepath": f}), &base).await;
        }
        let judged = tool.judge(&args, &base.shared);
        assert_eq!(judged.tighten, None, "{args}");
        let mut c = base.clone();
        c.grant = Grant::of_allowed(judged);
        swap(&s);
        let out = match tool.run(args.clone(), &c).await {
            Ok(o) => o.content,
            Err(e) => format!("error: {e}"),
        };
        let name = tool.name();
        assert!(!out.contains(SECRET), "{name} {args}: {out}");
        assert!(
            out.starts_with("error: "),
            "{name} {args} went through: {out}"
        );
        assert_eq!(outside_files(&s.outside), BEFORE, "{name} {args}");
        for f in BEFORE {
            let text = std::fs::read_to_string(s.outside.join(f)).unwrap();
            assert_eq!(text, format!("{SECRET}\n"), "{name} {args}");
        }
        assert!(walk(&s.artifacts).is_empty(), "{name} {args}");
    }
    // The control: the old way (check the resolved path, then use the path by name) writes
    // and reads outside after the same swap.
    let s = scene();
    assert!(resolve_in_workspace(&s.ws, "d/new.txt").inside);
    swap(&s);
    std::fs::write(s.ws.join("d/new.txt"), "x").unwrap();
    assert!(s.outside.join("new.txt").exists());
    assert!(
        std::fs::read_to_string(s.ws.join("d/f.txt"))
            .unwrap()
            .contains(SECRET)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_reads_lists_searches_and_uploads_never_reach_outside() {
    let s = scene();
    let base = ctx(&s);
    for f in ["d/f.txt", "d/sub/f.txt"] {
        assert!(
            call(&Read, &json!({"filepath": f}), &base)
                .await
                .unwrap()
                .contains("inside text")
        );
    }
    let outside = s.outside.clone();
    // Edit and MultiEdit share the read set of `base`: run them with it.
    let mut outputs = Vec::new();
    let stop = Arc::new(AtomicBool::new(false));
    let (handle, _) = swapper(&s.ws, "d", &outside, stop.clone());
    for i in 0..CALLS {
        let edit = json!({"file_path": "d/f.txt", "old_string": "text", "new_string": format!("text{i}"), "replace_all": true});
        outputs.extend(call(&Edit, &edit, &base).await);
        let multi = json!({"file_path": "d/sub/f.txt", "edits": [{"old_string": "text", "new_string": "text!", "replace_all": true}]});
        outputs.extend(call(&MultiEdit, &multi, &base).await);
    }
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    for (tool, args) in [
        (&Read as &dyn Tool, json!({"filepath": "d/f.txt"})),
        (&Read, json!({"filepath": "d/sub/f.txt"})),
        (&List, json!({"dirpath": "d"})),
        (&Search, json!({"pattern": "SECRET", "path": "d"})),
        (&Search, json!({"pattern": "SECRET"})),
        (&UploadArtifact, json!({"filePath": "d/report.txt"})),
    ] {
        outputs.extend(race(&s, "d", &outside, tool, |_| args.clone()).await);
    }
    for out in &outputs {
        assert!(!out.contains(SECRET), "an outside file was read: {out}");
    }
    assert_eq!(outside_files(&s.outside), BEFORE);
    for f in BEFORE {
        assert_eq!(
            std::fs::read_to_string(s.outside.join(f)).unwrap(),
            format!("{SECRET}\n"),
            "{f}"
        );
    }
    for copy in walk(&s.artifacts) {
        let text = std::fs::read_to_string(&copy).unwrap();
        assert!(
            !text.contains(SECRET),
            "{} holds the outside secret",
            copy.display()
        );
    }
    // The controls: with nothing swapped each tool reaches the workspace's own files.
    let edit = json!({"file_path": "d/f.txt", "old_string": "text", "new_string": "TEXT"});
    let done = call(&Edit, &edit, &base).await.unwrap_or_default();
    assert!(done.starts_with("Edited d/f.txt"), "{done}");
    let upload = call(&UploadArtifact, &json!({"filePath": "d/report.txt"}), &base).await;
    assert!(upload.unwrap_or_default().contains("Uploaded d/report.txt"));
    let listed = call(&List, &json!({"dirpath": "d"}), &base)
        .await
        .unwrap_or_default();
    assert!(listed.contains("report.txt (file"), "{listed}");
    let found = call(&Search, &json!({"pattern": "inside", "path": "d"}), &base).await;
    assert!(
        found
            .unwrap_or_default()
            .contains("d/report.txt:1:inside report")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_for_a_symlink_is_neither_read_nor_written_through() {
    let s = scene();
    let outside_file = s.outside.join("f.txt");
    let base = ctx(&s);
    let stop = Arc::new(AtomicBool::new(false));
    let (link, real) = (s.ws.join("d/f.txt"), s.ws.join("d/f.txt.real"));
    let swapping = {
        let stop = stop.clone();
        let target = outside_file.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&link, &real).is_ok() {
                    let _ = std::os::unix::fs::symlink(&target, &link);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&link);
                    let _ = std::fs::rename(&real, &link);
                }
            }
        })
    };
    let mut outputs = Vec::new();
    for i in 0..CALLS {
        outputs.extend(call(&Read, &json!({"filepath": "d/f.txt"}), &base).await);
        outputs.extend(
            call(
                &Write,
                &json!({"filepath": "d/f.txt", "content": format!("w{i}\n")}),
                &base,
            )
            .await,
        );
        outputs.extend(call(&UploadArtifact, &json!({"filePath": "d/f.txt"}), &base).await);
    }
    stop.store(true, Ordering::Relaxed);
    swapping.join().unwrap();
    for out in &outputs {
        assert!(!out.contains(SECRET), "the outside file was read: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(&outside_file).unwrap(),
        format!("{SECRET}\n")
    );
    let read = call(&Read, &json!({"filepath": "d/f.txt"}), &base)
        .await
        .unwrap_or_default();
    assert!(
        read.contains("Contents of d/f.txt"),
        "the control read nothing: {read}"
    );
}
