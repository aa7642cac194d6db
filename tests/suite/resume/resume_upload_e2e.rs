//! `--upload-url` is a secret, so the saved run does not keep it: a resume that does not give
//! it again says so on stderr (without the URL), and uploads only where it is told to.

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{Run, cn_run, run, write_files};

fn resume(dir: &std::path::Path, extra: &[String]) -> Run {
    let mut cmd = cn_run(dir);
    cmd.args(["--resume", "latest", "-p", "again"]).args(extra);
    run(cmd, None)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resume_without_the_upload_url_says_it_is_not_kept() {
    let server = MockServer::start_with(|_| Reply::text(200, "text/plain", "ok")).await;
    let url = format!("{}/up/tok-5ecret-in-url/{{run_id}}.json", server.url());
    let tmp = tempfile::tempdir().unwrap();
    let job =
        "version: 1\nname: up\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\n";
    let script = "turns:\n  - text: first\n  - text: second\n  - text: third\n";
    write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", script)]);
    let dir = tmp.path().to_path_buf();
    let (first, without, with) = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.args(["job.yaml", "--upload-url", url.as_str()]);
        let first = run(cmd, None);
        let without = resume(&dir, &[]);
        let with = resume(&dir, &["--upload-url".to_owned(), url]);
        (first, without, with)
    })
    .await
    .unwrap();
    assert_eq!(first.code, 0, "{first:#?}");
    assert!(
        !first.stderr.contains("give --upload-url again"),
        "{first:#?}"
    );
    assert_eq!(without.code, 0, "{without:#?}");
    assert!(
        without.stderr.contains("was started with --upload-url")
            && without.stderr.contains("give --upload-url again"),
        "{without:#?}"
    );
    assert!(
        !without.stderr.contains("tok-5ecret-in-url"),
        "{without:#?}"
    );
    assert_eq!(with.code, 0, "{with:#?}");
    assert!(
        !with.stderr.contains("give --upload-url again"),
        "{with:#?}"
    );
    assert!(
        !server.requests().is_empty(),
        "the uploads reached the server"
    );
}

#[test]
fn a_run_without_an_upload_url_resumes_without_the_notice() {
    let tmp = tempfile::tempdir().unwrap();
    let job =
        "version: 1\nname: up\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\n";
    let script = "turns:\n  - text: first\n  - text: second\n";
    write_files(tmp.path(), &[("job.yaml", job), ("s.yaml", script)]);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    assert_eq!(run(cmd, None).code, 0);
    let r = resume(tmp.path(), &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(!r.stderr.contains("--upload-url"), "{r:#?}");
}
