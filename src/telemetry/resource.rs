//! The resource every signal carries: `service.name` (`cn-run` unless `OTEL_SERVICE_NAME`
//! or `OTEL_RESOURCE_ATTRIBUTES` say otherwise), `service.version`, and where the run ran —
//! the CI system's pipeline, job, repository, branch and commit, read from the variables
//! GitHub Actions, GitLab CI and Jenkins set, named by the `cicd.*` and `vcs.*` semantic
//! conventions, so a dashboard can group runs by repository and workflow.
//! `OTEL_RESOURCE_ATTRIBUTES` wins over what is detected.

use opentelemetry::KeyValue;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::resource::TelemetryResourceDetector;

/// The resource of this process, from its environment `var`.
pub fn resource(var: &dyn Fn(&str) -> Option<String>) -> Resource {
    let mut attributes: Vec<KeyValue> = ci_attributes(var)
        .into_iter()
        .map(|(k, v)| KeyValue::new(k, v))
        .collect();
    attributes.push(KeyValue::new("service.name", "cn-run"));
    attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    let mut builder = Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(attributes)
        .with_attributes(env_attributes(var));
    if let Some(name) = var("OTEL_SERVICE_NAME").filter(|n| !n.trim().is_empty()) {
        builder = builder.with_service_name(name.trim().to_owned());
    }
    builder.build()
}

/// `OTEL_RESOURCE_ATTRIBUTES`: `key=value` pairs separated by commas, values
/// percent-encoded (the specification's format); malformed pairs are left out.
fn env_attributes(var: &dyn Fn(&str) -> Option<String>) -> Vec<KeyValue> {
    let text = var("OTEL_RESOURCE_ATTRIBUTES").unwrap_or_default();
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(k, _)| !k.trim().is_empty())
        .map(|(k, v)| {
            let value = percent_encoding::percent_decode_str(v.trim()).decode_utf8_lossy();
            KeyValue::new(k.trim().to_owned(), value.into_owned())
        })
        .collect()
}

/// The CI attributes of the environment `var`: GitHub Actions, GitLab CI or Jenkins.
pub fn ci_attributes(var: &dyn Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    let get = |name: &str| var(name).filter(|v| !v.is_empty());
    let pairs = if get("GITHUB_ACTIONS").as_deref() == Some("true") {
        github(&get)
    } else if get("GITLAB_CI").is_some() {
        gitlab(&get)
    } else if get("JENKINS_URL").is_some() {
        jenkins(&get)
    } else {
        Vec::new()
    };
    pairs
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

type Pairs = Vec<(&'static str, Option<String>)>;

fn github(get: &dyn Fn(&str) -> Option<String>) -> Pairs {
    let server = get("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".to_owned());
    let repo = get("GITHUB_REPOSITORY");
    let run = get("GITHUB_RUN_ID");
    let run_url = match (&repo, &run) {
        (Some(repo), Some(run)) => Some(format!("{server}/{repo}/actions/runs/{run}")),
        _ => None,
    };
    let change = get("GITHUB_REF")
        .and_then(|r| r.strip_prefix("refs/pull/").map(str::to_owned))
        .and_then(|r| r.split('/').next().map(str::to_owned));
    vec![
        ("cn_run.ci.system", Some("github_actions".to_owned())),
        ("cicd.pipeline.name", get("GITHUB_WORKFLOW")),
        ("cicd.pipeline.run.id", run),
        ("cicd.pipeline.run.url.full", run_url),
        ("cicd.pipeline.task.name", get("GITHUB_JOB")),
        ("cicd.worker.name", get("RUNNER_NAME")),
        (
            "vcs.repository.url.full",
            repo.as_ref().map(|r| format!("{server}/{r}")),
        ),
        ("vcs.repository.name", repo.as_deref().map(last_segment)),
        ("vcs.owner.name", get("GITHUB_REPOSITORY_OWNER")),
        (
            "vcs.ref.head.name",
            get("GITHUB_HEAD_REF").or_else(|| get("GITHUB_REF_NAME")),
        ),
        ("vcs.ref.head.revision", get("GITHUB_SHA")),
        ("vcs.change.id", change),
    ]
}

fn gitlab(get: &dyn Fn(&str) -> Option<String>) -> Pairs {
    let path = get("CI_PROJECT_PATH");
    vec![
        ("cn_run.ci.system", Some("gitlab".to_owned())),
        (
            "cicd.pipeline.name",
            get("CI_PIPELINE_NAME").or_else(|| path.clone()),
        ),
        ("cicd.pipeline.run.id", get("CI_PIPELINE_ID")),
        ("cicd.pipeline.run.url.full", get("CI_PIPELINE_URL")),
        ("cicd.pipeline.task.name", get("CI_JOB_NAME")),
        ("cicd.pipeline.task.run.id", get("CI_JOB_ID")),
        ("cicd.pipeline.task.run.url.full", get("CI_JOB_URL")),
        ("cicd.worker.name", get("CI_RUNNER_DESCRIPTION")),
        ("vcs.repository.url.full", get("CI_PROJECT_URL")),
        ("vcs.repository.name", get("CI_PROJECT_NAME")),
        ("vcs.owner.name", get("CI_PROJECT_NAMESPACE")),
        ("vcs.ref.head.name", get("CI_COMMIT_REF_NAME")),
        ("vcs.ref.head.revision", get("CI_COMMIT_SHA")),
        ("vcs.change.id", get("CI_MERGE_REQUEST_IID")),
    ]
}

fn jenkins(get: &dyn Fn(&str) -> Option<String>) -> Pairs {
    let url = get("GIT_URL");
    vec![
        ("cn_run.ci.system", Some("jenkins".to_owned())),
        ("cicd.pipeline.name", get("JOB_NAME")),
        ("cicd.pipeline.run.id", get("BUILD_NUMBER")),
        ("cicd.pipeline.run.url.full", get("BUILD_URL")),
        ("cicd.pipeline.task.name", get("STAGE_NAME")),
        ("cicd.worker.name", get("NODE_NAME")),
        (
            "vcs.repository.name",
            url.as_deref()
                .map(|u| last_segment(u.trim_end_matches(".git"))),
        ),
        ("vcs.repository.url.full", url),
        (
            "vcs.ref.head.name",
            get("CHANGE_BRANCH").or_else(|| get("GIT_BRANCH")),
        ),
        ("vcs.ref.head.revision", get("GIT_COMMIT")),
        ("vcs.change.id", get("CHANGE_ID")),
    ]
}

fn last_segment(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn get(attrs: &[(&'static str, String)], key: &str) -> Option<String> {
        attrs
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }

    #[test]
    fn github_actions_gitlab_and_jenkins_name_repository_and_workflow() {
        let gh = ci_attributes(&env(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REPOSITORY", "acme/widgets"),
            ("GITHUB_WORKFLOW", "nightly lint"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_REF", "refs/pull/7/merge"),
            ("GITHUB_SHA", "abc"),
        ]));
        assert_eq!(
            get(&gh, "cicd.pipeline.name").as_deref(),
            Some("nightly lint")
        );
        assert_eq!(
            get(&gh, "cicd.pipeline.run.url.full").as_deref(),
            Some("https://github.com/acme/widgets/actions/runs/42")
        );
        assert_eq!(
            get(&gh, "vcs.repository.url.full").as_deref(),
            Some("https://github.com/acme/widgets")
        );
        assert_eq!(get(&gh, "vcs.repository.name").as_deref(), Some("widgets"));
        assert_eq!(get(&gh, "vcs.change.id").as_deref(), Some("7"));
        let gl = ci_attributes(&env(&[
            ("GITLAB_CI", "true"),
            ("CI_PROJECT_PATH", "group/app"),
            ("CI_PROJECT_URL", "https://gitlab.com/group/app"),
            ("CI_JOB_NAME", "agent"),
        ]));
        assert_eq!(get(&gl, "cicd.pipeline.name").as_deref(), Some("group/app"));
        assert_eq!(
            get(&gl, "cicd.pipeline.task.name").as_deref(),
            Some("agent")
        );
        let jk = ci_attributes(&env(&[
            ("JENKINS_URL", "http://ci/"),
            ("JOB_NAME", "fix-lint"),
            ("GIT_URL", "https://git.example/org/repo.git"),
        ]));
        assert_eq!(get(&jk, "cicd.pipeline.name").as_deref(), Some("fix-lint"));
        assert_eq!(get(&jk, "vcs.repository.name").as_deref(), Some("repo"));
        assert!(ci_attributes(&env(&[("CI", "true")])).is_empty());
    }

    #[test]
    fn the_service_name_is_cn_run_unless_the_environment_names_one() {
        let name = |vars: &[(&str, &str)]| {
            resource(&env(vars))
                .get(&opentelemetry::Key::new("service.name"))
                .map(|v| v.to_string())
        };
        assert_eq!(name(&[]).as_deref(), Some("cn-run"));
        assert_eq!(
            name(&[("OTEL_SERVICE_NAME", "agents")]).as_deref(),
            Some("agents")
        );
        let both = [
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-attrs,team=a%20b",
            ),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_WORKFLOW", "detected"),
        ];
        assert_eq!(name(&both[..1]).as_deref(), Some("from-attrs"));
        let mut overridden = both.to_vec();
        overridden.push(("OTEL_RESOURCE_ATTRIBUTES", "cicd.pipeline.name=mine"));
        overridden.remove(0);
        let r = resource(&env(&overridden));
        let get = |k: &'static str| r.get(&opentelemetry::Key::new(k)).map(|v| v.to_string());
        assert_eq!(get("cicd.pipeline.name").as_deref(), Some("mine"));
        let r = resource(&env(&both));
        let get = |k: &'static str| r.get(&opentelemetry::Key::new(k)).map(|v| v.to_string());
        assert_eq!(get("team").as_deref(), Some("a b"));
        assert_eq!(get("cicd.pipeline.name").as_deref(), Some("detected"));
        assert_eq!(
            name(&[("OTEL_SERVICE_NAME", "x"), both[0]]).as_deref(),
            Some("x")
        );
    }
}
