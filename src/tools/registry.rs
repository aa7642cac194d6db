//! The tools offered in a run, in the order they are offered, looked up by name; and the
//! bodies of the built-in tools, one row each (their descriptions are `catalog::BUILTIN`;
//! a test below keeps the two lists equal).

use std::sync::Arc;

use super::Tool;
use crate::conversation::ToolSpec;

/// Every built-in tool, in the order offered to the model (as `cn` orders them); the
/// policy filters it. `model` picks MultiEdit or Edit (Continue's capability rule).
/// AskQuestion is never offered: nobody can answer it in a headless run.
pub fn builtin_tools(model: &str) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(super::Read),
        Arc::new(super::Write),
        Arc::new(super::List),
        Arc::new(super::Bash),
        Arc::new(super::Fetch::default()),
        Arc::new(super::Checklist),
        Arc::new(super::CheckBackgroundJob),
        Arc::new(super::Search),
        Arc::new(super::ReportFailure),
        Arc::new(super::UploadArtifact),
        super::edit_tool_for(model),
        Arc::new(super::Exit),
        #[cfg(test)]
        Arc::new(super::probe::Probe),
    ]
}

#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a tool; a later tool with the same name replaces the earlier one.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Keep only the tools for which `keep` is true (e.g. those the policy offers).
    pub fn retain(&mut self, mut keep: impl FnMut(&dyn Tool) -> bool) {
        self.tools.retain(|t| keep(t.as_ref()));
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_owned()).collect()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec()).collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{self, Offer};

    /// Each body is its catalogue row, in the catalogue's order: the rows offered always,
    /// and the edit tool the model gets.
    #[test]
    fn the_bodies_are_the_catalogue_in_its_order() {
        for model in ["gpt-4.1", "plain-model"] {
            let offered: Vec<&str> = builtin_tools(model)
                .iter()
                .map(|t| t.info().map_or("?", |i| i.name))
                .collect();
            let edit = crate::tools::edit_tool_for(model);
            let expected: Vec<&str> = catalog::BUILTIN
                .iter()
                .filter(|t| t.offer == Offer::Always || t.name == edit.name())
                .map(|t| t.name)
                .collect();
            assert_eq!(offered, expected, "{model}");
        }
    }
}
