//! No module cycles where the review found them: between `job` and `tools`, among the files
//! of `permissions`, of `command_safety` (and of the other leaf and loop modules). The edges
//! are the `super::x` and `crate::module::x` paths a file's non-test code names; `mod.rs`, the
//! module's face, is left out (its children may name its central types). A cycle fails with
//! the files in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::runner::repo_root;

/// The code of a file before its `#[cfg(test)]` part.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The first path segment after each `prefix` (both `prefix::name` and `prefix::{a, b::c}`).
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(ident));
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// File → files of the same module it names.
fn file_edges(module: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = repo_root().join("src").join(module);
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let stem = name.strip_suffix(".rs")?.to_owned();
            (!stem.ends_with("_tests") && stem != "mod").then_some(stem)
        })
        .collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let text = code(&dir.join(format!("{file}.rs")));
        let mut named = names_after(&text, "super::");
        named.extend(names_after(&text, &format!("crate::{module}::")));
        named.retain(|n| files.contains(n) && n != file);
        edges.insert(file.clone(), named);
    }
    edges
}

/// Every cycle (strongly connected set of more than one node), sorted.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|k| (k, reach(k))).collect();
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for (a, from_a) in &reached {
        let group: Vec<String> = from_a
            .iter()
            .filter(|b| reached[b].contains(*a))
            .cloned()
            .collect();
        if !group.is_empty() {
            out.insert(group);
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut edges = BTreeMap::new();
    for (a, b) in [
        ("policy", "decide"),
        ("decide", "explain"),
        ("explain", "policy"),
        ("explain", "types"),
    ] {
        edges
            .entry(a.to_owned())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_owned());
    }
    edges.insert("types".to_owned(), BTreeSet::new());
    assert_eq!(cycles(&edges), vec![vec!["decide", "explain", "policy"]]);
    assert_eq!(
        names_after("use super::{a, b::c};\nsuper::d::e();", "super::"),
        ["a", "b", "d"].into_iter().map(String::from).collect()
    );
}

#[test]
fn no_file_cycles_inside_the_leaf_and_loop_modules() {
    for module in [
        "permissions",
        "command_safety",
        "tools",
        "agent",
        "context",
        "provider",
        "conversation",
    ] {
        let edges = file_edges(module);
        assert!(edges.len() > 1, "{module}: no files found");
        assert_eq!(
            cycles(&edges),
            Vec::<Vec<String>>::new(),
            "{module}: {edges:#?}"
        );
    }
}

#[test]
fn permissions_rule_and_check_live_in_types() {
    let types = code(&repo_root().join("src/permissions/types.rs"));
    assert!(types.contains("pub(crate) struct Rule {"));
    assert!(types.contains("pub(crate) struct Check {"));
}

/// Files of `src/<from>` that name `crate::<to>`.
fn naming(from: &str, to: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![repo_root().join("src").join(from)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if code(&path).contains(&format!("crate::{to}::")) {
                out.push(path.display().to_string());
            }
        }
    }
    out
}

#[test]
fn job_does_not_depend_on_tools() {
    // tools → job is the direction (a tool reads the job's limits); never back.
    assert!(
        !naming("tools", "job").is_empty(),
        "the control edge is gone: fix the test"
    );
    assert_eq!(naming("job", "tools"), Vec::<String>::new());
}

#[test]
fn app_only_dispatches_and_run_never_names_app() {
    // app/mod.rs is the dispatcher: module declarations, imports and the one `run` match;
    // no helper its subcommands would call back into.
    let dispatcher = code(&repo_root().join("src/app/mod.rs"));
    let functions: Vec<&str> = dispatcher.lines().filter(|l| l.contains("fn ")).collect();
    assert_eq!(
        functions.len(),
        1,
        "one function in the dispatcher: {functions:?}"
    );
    assert!(
        functions[0].starts_with("pub fn run(cli: Cli,"),
        "{functions:?}"
    );
    assert!(!dispatcher.contains("struct ") && !dispatcher.contains("enum "));
    // A subcommand names its siblings (`super::console::stdout`), never the dispatcher's own
    // items (`super::stdout`).
    let dir = repo_root().join("src/app");
    let modules: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .collect();
    assert!(modules.contains("console") && modules.contains("run_cmd"));
    for file in &modules {
        let named = names_after(&code(&dir.join(format!("{file}.rs"))), "super::");
        let into_dispatcher: Vec<&String> =
            named.iter().filter(|n| !modules.contains(*n)).collect();
        assert!(
            into_dispatcher.is_empty(),
            "app/{file}.rs names super::{into_dispatcher:?}"
        );
    }
    // The run pipeline is below the commands: it never names them.
    assert!(!naming("app", "run").is_empty(), "the control edge is gone");
    assert_eq!(naming("run", "app"), Vec::<String>::new());
}

#[test]
fn the_run_pipeline_files_read_in_the_order_a_run_takes_them() {
    // `ls src/run` lists the steps in order; mod.rs declares them in the same order.
    let dir = repo_root().join("src/run");
    let mut numbered: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    numbered.sort();
    let listed = code(&dir.join("mod.rs"));
    let declared: Vec<String> = listed
        .lines()
        .filter_map(|l| l.strip_prefix("#[path = \""))
        .map(|l| l.trim_end_matches("\"]").to_owned())
        .collect();
    assert_eq!(declared, numbered);
    let steps: Vec<&str> = numbered.iter().map(|n| &n[3..n.len() - 3]).collect();
    assert_eq!(
        steps,
        [
            "prepare",
            "place",
            "guard",
            "outputs",
            "tools",
            "conversation",
            "announce",
            "execute",
            "conclude",
            "finish"
        ]
    );
}

/// The top-level modules the non-test code of `src/<module>` (file or folder) names.
fn module_names(module: &str) -> BTreeSet<String> {
    let src = repo_root().join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.join(module)];
    if src.join(format!("{module}.rs")).is_file() {
        files.push(src.join(format!("{module}.rs")));
    }
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut out = BTreeSet::new();
    for file in files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        if name.ends_with("_tests") || name == "tests" {
            continue;
        }
        out.extend(names_after(&code(&file), "crate::"));
    }
    out.remove(module);
    out
}

#[test]
fn events_own_their_payloads_and_name_only_leaf_modules() {
    // The event schema is the contract every output reads: it borrows no type from a module
    // that emits or folds events (mcp, report, hooks, tools, checks, checkpoint, permissions
    // did before), only from leaves that name no other module.
    let named = module_names("events");
    assert!(named.contains("conversation"), "control: {named:?}");
    for module in &named {
        assert_eq!(
            module_names(module),
            BTreeSet::new(),
            "events names `{module}`, which is not a leaf"
        );
    }
    assert!(
        !module_names("report").is_empty(),
        "control: report names other modules"
    );
}
