//! What the catalogue says about one tool: [`ToolInfo`] and the small types its rows are
//! made of. Plain data and pure functions over a call's arguments, so every consumer —
//! the registry, job validation, the permission engine, checkpoints, rule triggers, hooks
//! and reports — asks the same row the same question.

use serde_json::Value;

use crate::conversation::ToolSpec;

/// What a tool does, in one word (reports and `explain` show it; plan mode excludes
/// [`ToolClass::Writes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolClass {
    /// Looks at the workspace: reads, lists, searches.
    Reads,
    /// Changes files it names.
    Writes,
    /// Runs commands (and looks after the ones it started).
    Runs,
    /// Sends a request off the machine.
    Fetches,
    /// Hands work to a nested agent.
    Delegates,
    /// Tells the run something: a checklist, a failure, an artifact, the end.
    Reports,
}

impl ToolClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolClass::Reads => "reads",
            ToolClass::Writes => "writes",
            ToolClass::Runs => "runs",
            ToolClass::Fetches => "fetches",
            ToolClass::Delegates => "delegates",
            ToolClass::Reports => "reports",
        }
    }
}

/// What a tool's rule argument holds, which says how a `Tool(pattern)` rule matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A shell command: read by the command-safety evaluator, matched as wildcard text.
    Command,
    /// A URL, matched as wildcard text.
    Url,
    /// A name or id, matched as wildcard text.
    Name,
    /// The path of one file, matched as a path glob.
    File,
    /// The path of a directory, matched as a path glob.
    Dir,
    /// A file or directory, matched as a path glob.
    Path,
}

impl ArgKind {
    /// Whether the argument is a path (a rule matches it as a glob over the real path).
    pub fn is_path(self) -> bool {
        matches!(self, ArgKind::File | ArgKind::Dir | ArgKind::Path)
    }
}

/// The one argument a permission rule `Tool(pattern)` tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleArg {
    pub name: &'static str,
    pub kind: ArgKind,
    /// The value a call that leaves the argument out means (Search's `path`: the workspace).
    pub default: Option<&'static str>,
}

/// Whether a call may change files (the checkpointer's question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    Nothing,
    /// Only the file its rule argument names (the checkpoint looks at that file alone).
    NamedFile,
    /// Anything in the workspace (the checkpoint scans).
    Anything,
}

/// When a run offers the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Always,
    /// One of a pair, chosen by the model name (Edit or MultiEdit, as Continue chooses).
    ByModel,
    /// When the job declares what it works with (subagents, skills).
    WhenDeclared,
}

/// The tool as Claude Code names it, and its fields by Claude's names: `(ours, Claude's)`.
/// Hooks written for Claude Code match these names and read these fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaudeName {
    pub name: &'static str,
    pub fields: &'static [(&'static str, &'static str)],
}

/// One tool, described once.
#[derive(Debug, Clone, Copy)]
pub struct ToolInfo {
    /// The name the model calls and rules name (Continue's).
    pub name: &'static str,
    /// What the model is told the tool does.
    pub description: &'static str,
    pub class: ToolClass,
    pub changes: Changes,
    pub rule_arg: Option<RuleArg>,
    /// A tool a rule naming this one also names (Edit ⇄ MultiEdit: a run offers one).
    pub twin: Option<&'static str>,
    /// The boolean argument that leaves the call's work running after it returns (a
    /// later checkpoint must look at the whole workspace).
    pub background: Option<&'static str>,
    pub claude: &'static [ClaudeName],
    pub offer: Offer,
    /// The parameter schema the model is offered, generated from the argument struct.
    pub schema: fn() -> Value,
}

impl RuleArg {
    /// The argument `name`, of `kind`, with no default.
    pub const fn named(name: &'static str, kind: ArgKind) -> RuleArg {
        RuleArg {
            name,
            kind,
            default: None,
        }
    }
}

impl ToolInfo {
    /// A row with what most tools have: no rule argument, twin or background flag, no
    /// Claude name, always offered. A tool's row sets its description and what differs
    /// (`ToolInfo { description: …, ..ToolInfo::new(…) }`).
    pub const fn new(
        name: &'static str,
        class: ToolClass,
        changes: Changes,
        schema: fn() -> Value,
    ) -> ToolInfo {
        ToolInfo {
            name,
            description: "",
            class,
            changes,
            rule_arg: None,
            twin: None,
            background: None,
            claude: &[],
            offer: Offer::Always,
            schema,
        }
    }

    /// Name, description and parameters, as offered to the model.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.to_owned(),
            description: self.description.to_owned(),
            parameters: (self.schema)(),
        }
    }

    /// Whether a call may change files (a checkpoint follows it).
    pub fn changes_files(&self) -> bool {
        self.changes != Changes::Nothing
    }

    /// The rule argument's value in `args`, as text (its default when left out).
    pub fn rule_value(&self, args: &Value) -> Option<String> {
        let arg = self.rule_arg?;
        match args.get(arg.name).and_then(value_text) {
            None => arg.default.map(str::to_owned),
            found => found,
        }
    }

    /// The one file a call changes, as the model wrote it (`None` unless the tool changes
    /// only the file it names).
    pub fn changed_file<'a>(&self, args: &'a Value) -> Option<&'a str> {
        (self.changes == Changes::NamedFile)
            .then(|| self.file_arg(args))
            .flatten()
    }

    /// The file a call reads or writes, as the model wrote it (what conditional rules
    /// watch); `None` for tools that touch no single file.
    pub fn touched_file<'a>(&self, args: &'a Value) -> Option<&'a str> {
        matches!(self.class, ToolClass::Reads | ToolClass::Writes)
            .then(|| self.file_arg(args))
            .flatten()
    }

    fn file_arg<'a>(&self, args: &'a Value) -> Option<&'a str> {
        let arg = self.rule_arg.filter(|a| a.kind == ArgKind::File)?;
        args.get(arg.name)?.as_str()
    }

    /// The shell command of a call, for a tool whose rule argument is a command.
    pub fn command<'a>(&self, args: &'a Value) -> Option<&'a str> {
        let arg = self.rule_arg.filter(|a| a.kind == ArgKind::Command)?;
        args.get(arg.name)?.as_str()
    }

    /// Whether this call leaves work running after it returns.
    pub fn leaves_running(&self, args: &Value) -> bool {
        self.background
            .is_some_and(|flag| args.get(flag).and_then(Value::as_bool) == Some(true))
    }

    /// Whether a rule naming `name` names this tool (its own name or its twin's).
    pub fn named_by(&self, name: &str) -> bool {
        self.name == name || self.twin == Some(name)
    }

    /// Claude Code's name for one of this tool's fields, if Claude has it.
    pub fn claude_field(&self, ours: &str) -> Option<&'static str> {
        self.claude
            .iter()
            .flat_map(|c| c.fields.iter())
            .find(|(o, _)| *o == ours)
            .map(|&(_, theirs)| theirs)
    }
}

/// A string, number or boolean argument as text; anything else has no text.
pub fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}
