//! Skills: SKILL.md folders found in `.continue/skills/`, `.claude/skills/` and the job's
//! paths; only names and descriptions are offered up front, the Skills tool loads the rest.

use std::path::Path;
use std::sync::Arc;

use cn_run::skills::{SkillsTool, discover};
use cn_run::tools::{Tool, ToolContext, ToolError, ToolLimits, ToolShared};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::runner::write_files;

const PDF: &str = "---\nname: pdf-forms\ndescription: Fill in PDF forms\n  with the bundled script.\n---\n\n# Filling forms\n\nRun scripts/fill.py with the form and a JSON of values.\n";

/// A workspace with skills in every place they are looked for, and some broken ones.
fn workspace(dir: &Path) {
    write_files(
        dir,
        &[
            (".continue/skills/pdf/SKILL.md", PDF),
            (".continue/skills/pdf/scripts/fill.py", "print('fill')\n"),
            (".continue/skills/pdf/reference.md", "# Field names\n"),
            (".continue/skills/pdf/.cache/x", "hidden\n"),
            (".continue/skills/no-front-matter/SKILL.md", "# Just text\n"),
            (
                ".continue/skills/no-description/SKILL.md",
                "---\nname: nodesc\n---\nbody\n",
            ),
            (
                ".continue/skills/not-a-skill/README.md",
                "no SKILL.md here\n",
            ),
            (
                ".claude/skills/review/SKILL.md",
                "---\nname: code-review\ndescription: Review a diff for bugs\n---\nLook at every changed line.\n",
            ),
            (
                ".claude/skills/pdf-again/SKILL.md",
                "---\nname: pdf-forms\ndescription: A second skill with a taken name\n---\nignored\n",
            ),
            (
                "team/skills/deploy/SKILL.md",
                "---\nname: deploy\ndescription: Ship to staging\n---\nUse make deploy.\n",
            ),
            (
                "single/SKILL.md",
                "---\nname: single\ndescription: A folder given directly\n---\nOne skill.\n",
            ),
        ],
    );
}

fn ctx(dir: &Path) -> ToolContext {
    let shared = ToolShared::new(
        dir.to_path_buf(),
        vec![],
        CancellationToken::new(),
        ToolLimits::default(),
        dir.join("artifacts"),
    );
    ToolContext {
        shared: Arc::new(shared),
        parallel_calls: 1,
        call_id: "c1".into(),
        grant: cn_run::tools::Grant::default(),
    }
}

#[test]
fn skills_are_found_in_every_place_and_broken_ones_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    workspace(tmp.path());
    let skills = discover(
        tmp.path(),
        &["team/skills".into(), "single".into(), "missing".into()],
    );
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["pdf-forms", "code-review", "deploy", "single"]);
    let pdf = &skills[0];
    assert_eq!(
        pdf.description,
        "Fill in PDF forms with the bundled script."
    );
    assert!(pdf.body.starts_with("# Filling forms"), "{}", pdf.body);
    assert!(!pdf.body.contains("description:"));
    assert_eq!(pdf.files, ["reference.md", "scripts/fill.py"]);
    assert_eq!(pdf.dir, tmp.path().join(".continue/skills/pdf"));
}

#[test]
fn no_skill_folders_means_no_skills() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(discover(tmp.path(), &[]).is_empty());
}

#[tokio::test]
async fn the_tool_offers_summaries_and_loads_a_skill_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    workspace(tmp.path());
    let tool = SkillsTool::new(discover(tmp.path(), &["team/skills".into()]), tmp.path());
    assert_eq!(tool.name(), "Skills");
    let spec = tool.spec();
    assert!(
        spec.description
            .contains("- pdf-forms: Fill in PDF forms with the bundled script."),
        "{}",
        spec.description
    );
    assert!(spec.description.contains("- deploy: Ship to staging"));
    assert!(
        !spec.description.contains("scripts/fill.py"),
        "bodies must not be in the description"
    );
    assert_eq!(spec.parameters["required"], json!(["skill_name"]));

    let out = tool
        .run(json!({"skill_name": "pdf-forms"}), &ctx(tmp.path()))
        .await
        .unwrap()
        .content;
    assert!(out.contains("<skill_name>pdf-forms</skill_name>"), "{out}");
    assert!(out.contains("Run scripts/fill.py with the form"), "{out}");
    assert!(
        out.contains(".continue/skills/pdf/scripts/fill.py"),
        "{out}"
    );
    assert!(out.contains(".continue/skills/pdf/reference.md"), "{out}");
    assert!(out.contains("Read tool"), "{out}");

    let out = tool
        .run(json!({"skill_name": "deploy"}), &ctx(tmp.path()))
        .await
        .unwrap()
        .content;
    assert!(out.contains("Use make deploy."));
    assert!(
        !out.contains("<skill_files>"),
        "a skill with no other files lists none: {out}"
    );

    match tool
        .run(json!({"skill_name": "nope"}), &ctx(tmp.path()))
        .await
    {
        Err(ToolError::RespondToModel(m)) => {
            assert!(
                m.contains("\"nope\"") && m.contains("pdf-forms, code-review, deploy"),
                "{m}"
            );
        }
        other => panic!("expected an error for the model, got {other:?}"),
    }
}
