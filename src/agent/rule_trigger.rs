//! Conditional rules join the system message once the run touches a file they name: after
//! each turn, the file each call reads or writes (the catalogue's `touched_file`: Read,
//! Write, Edit, MultiEdit) is matched against the waiting rules; a match adds the rule from
//! the next turn on, once, with an event.

use std::path::Path;

use super::Agent;
use crate::conversation::ToolCall;
use crate::events::Event;
use crate::tools::resolve_in_workspace;

/// Bytes of a touched file read to test a rule's regex.
const REGEX_READ_LIMIT: u64 = 1024 * 1024;

fn touched_path(call: &ToolCall) -> Option<String> {
    let tool = crate::catalog::find(&call.name)?;
    let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
    tool.touched_file(&args).map(str::to_owned)
}

impl Agent<'_> {
    pub(super) fn apply_touched_rules(&mut self, turn: u32, calls: &[ToolCall]) {
        if self.rules.is_empty() {
            return;
        }
        let workspace = self.shared.workspace.clone();
        for raw in calls.iter().filter_map(touched_path) {
            let resolved = resolve_in_workspace(&workspace, &raw);
            let rel = resolved
                .real
                .strip_prefix(&workspace)
                .unwrap_or(Path::new(&raw))
                .to_path_buf();
            let content = || {
                use std::io::Read as _;
                let file = std::fs::File::open(&resolved.real).ok()?;
                let mut text = String::new();
                file.take(REGEX_READ_LIMIT).read_to_string(&mut text).ok()?;
                Some(text)
            };
            let mut i = 0;
            while i < self.rules.len() {
                match self.rules[i].matches_touch(&rel, content) {
                    Some(reason) => {
                        let rule = self.rules.remove(i);
                        self.system.add(format!(
                            "<rule name=\"{}\">\n{}\n</rule>",
                            rule.name, rule.text
                        ));
                        self.emitter.emit(Event::RuleApplied {
                            turn,
                            name: rule.name,
                            origin: rule.origin,
                            reason,
                        });
                    }
                    None => i += 1,
                }
            }
        }
    }
}
