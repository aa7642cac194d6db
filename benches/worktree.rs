//! Cost of isolating one job: create a worktree of a 1,000-file repository, remove it
//! again, and merge a few JUnit reports (issue bar: under 100 ms per job).

use std::time::Instant;

use cn_run::worktree::RunWorktree;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

pub(crate) fn run() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    for i in 0..1_000 {
        let d = repo.join(format!("src/m{}", i / 50));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join(format!("f{i}.rs")),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n").repeat(20),
        )
        .unwrap();
    }
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=b",
        "-c",
        "user.email=b@b",
        "commit",
        "-qm",
        "x",
    ]);
    let (mut create, mut remove) = (Vec::new(), Vec::new());
    for i in 0..11 {
        let t = Instant::now();
        let wt = RunWorktree::create(
            &repo,
            &dir.path().join(format!("wt{i}")),
            &format!("bench{i}"),
        )
        .unwrap();
        create.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        wt.remove().unwrap();
        remove.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let suites: Vec<quick_junit::TestSuite> = (0..20)
        .map(|i| {
            let mut s = quick_junit::TestSuite::new(format!("job{i}"));
            s.add_test_case(quick_junit::TestCase::new(
                "agent run",
                quick_junit::TestCaseStatus::success(),
            ));
            s
        })
        .collect();
    let t = Instant::now();
    let xml = cn_run::report::junit::render(suites);
    let merge = t.elapsed().as_secs_f64() * 1000.0;
    println!(
        "worktree of a 1,000-file repo: create {:.1} ms, remove {:.1} ms (medians of 11); merging 20 JUnit suites {merge:.2} ms ({} bytes)",
        median(create),
        median(remove),
        xml.len()
    );
}
