//! The Skills tool: its description lists each skill's name and description; a call loads
//! one skill's full instructions and the list of the other files in its folder.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Skill;
use crate::catalog;
use crate::conversation::ToolSpec;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, str_arg};

pub struct SkillsTool {
    skills: Vec<Skill>,
    workspace: PathBuf,
}

impl std::fmt::Debug for SkillsTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        f.debug_struct("SkillsTool")
            .field("skills", &names)
            .finish()
    }
}

impl SkillsTool {
    /// The tool over `skills`; file paths in its output are shown relative to `workspace`
    /// when the skill lives inside it. Register it only when `skills` is not empty.
    pub fn new(skills: Vec<Skill>, workspace: &Path) -> Self {
        SkillsTool {
            skills,
            workspace: workspace.to_path_buf(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    /// Where the model should look for a skill's files: workspace-relative when possible.
    fn shown_dir(&self, skill: &Skill) -> String {
        match skill.dir.strip_prefix(&self.workspace) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => skill.dir.to_string_lossy().into_owned(),
        }
    }

    fn render(&self, skill: &Skill) -> String {
        let mut out = format!(
            "<skill_name>{}</skill_name>\n<skill_description>{}</skill_description>\n\
             <skill_content>\n{}\n</skill_content>",
            skill.name, skill.description, skill.body
        );
        if !skill.files.is_empty() {
            let dir = self.shown_dir(skill);
            let files: Vec<String> = skill.files.iter().map(|f| format!("{dir}/{f}")).collect();
            out.push_str(&format!(
                "\n<skill_files>{}</skill_files>\n<other_instructions>The skill's instructions \
                 may refer to these files; open the ones you need with the Read tool.\
                 </other_instructions>",
                files.join(", ")
            ));
        }
        out
    }
}

crate::tools::catalogued!(SkillsTool => catalog::SKILLS);

#[async_trait::async_trait]
impl Tool for SkillsTool {
    /// The catalogue's description with each skill's summary, and its names as the only
    /// values `skill_name` may take.
    fn spec(&self) -> ToolSpec {
        let mut spec = catalog::SKILLS.spec();
        for skill in &self.skills {
            let summary = skill
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            spec.description
                .push_str(&format!("\n- {}: {summary}", skill.name));
        }
        let names: Vec<Value> = self
            .skills
            .iter()
            .map(|s| Value::String(s.name.clone()))
            .collect();
        let skill_name = &mut spec.parameters["properties"]["skill_name"];
        if let Some(field) = skill_name.as_object_mut() {
            field.insert("enum".to_owned(), Value::Array(names));
        }
        spec
    }

    async fn run(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let wanted = str_arg(&args, "skill_name")?.trim();
        match self.skills.iter().find(|s| s.name == wanted) {
            Some(skill) => Ok(ToolOutput::text(self.render(skill))),
            None => Err(ToolError::RespondToModel(format!(
                "There is no skill named \"{wanted}\". The skills available are: {}.",
                self.names()
            ))),
        }
    }
}
