//! The events in a few named groups, for an output's exhaustive `match` to ignore a whole
//! group in one arm.
//!
//! Every output is a fold whose `match` over [`Event`](super::Event) names every event
//! (no `_ =>`), so a new event fails to compile in each output until it is handled or
//! ignored there. Most outputs read a few events and ignore the rest; writing the rest out
//! in every output repeated the same list of twenty-odd events. An output writes
//! `events::ignored!(conversation, notes; Warning, RunCompleted) => {}` instead: the groups
//! named, then (after `;`) the single events it also ignores. The macro makes that one flat
//! pattern, so the compiler still checks it: an event both handled and ignored is an
//! unreachable pattern, an event neither is a missing one, a misspelt group is an error.
//!
//! The groups do not overlap; an event in none must be named by each output. Putting a new
//! event into a group is the decision, made once, that the outputs ignoring that group
//! ignore it; each group says which those are.
//!
//! | group | events | ignored by |
//! |---|---|---|
//! | `conversation` | message.appended, history.replaced, config.resolved: the session's own records | result.json, progress lines, the bar, the tally, telemetry |
//! | `result_records` | check.finished, output.validated, artifact.collected, upload.finished, mcp.server, changes.recorded, rule.applied, sandbox.established: what result.json lists beyond its counters | progress lines, the bar, the tally, session.jsonl |
//! | `notes` | attempt.started, output.incomplete, compaction, mcp.notification: notes between the calls | result.json's records, progress lines, the bar, the tally, session.jsonl |
//! | `call_details` | permission.decision, hook.ran: how a call was decided | result.json's records, the bar, the tally, session.jsonl |
//! | `turn_marks` | turn.started, turn.completed | result.json's records, the tally (the others read them under a guard) |

/// The pattern matching the named groups' events and the single events after `;`.
macro_rules! ignored {
    (@ [$($v:ident)*] conversation $($rest:tt)*) => {
        $crate::events::ignored!(@ [$($v)* MessageAppended HistoryReplaced ConfigResolved] $($rest)*)
    };
    (@ [$($v:ident)*] result_records $($rest:tt)*) => {
        $crate::events::ignored!(@ [$($v)* CheckFinished OutputValidated ArtifactCollected
            UploadFinished McpServer ChangesRecorded RuleApplied SandboxEstablished] $($rest)*)
    };
    (@ [$($v:ident)*] notes $($rest:tt)*) => {
        $crate::events::ignored!(@ [$($v)* AttemptStarted OutputIncomplete Compaction
            McpNotification] $($rest)*)
    };
    (@ [$($v:ident)*] call_details $($rest:tt)*) => {
        $crate::events::ignored!(@ [$($v)* PermissionDecision HookRan] $($rest)*)
    };
    (@ [$($v:ident)*] turn_marks $($rest:tt)*) => {
        $crate::events::ignored!(@ [$($v)* TurnStarted TurnCompleted] $($rest)*)
    };
    (@ [$($v:ident)*] , $($rest:tt)*) => {
        $crate::events::ignored!(@ [$($v)*] $($rest)*)
    };
    (@ [$($v:ident)*] ; $($single:ident),* $(,)?) => {
        $crate::events::ignored!(@ [$($v)* $($single)*])
    };
    (@ [$($v:ident)*]) => {
        $($crate::events::Event::$v { .. })|*
    };
    (@ [$($v:ident)*] $($other:tt)*) => {
        compile_error!(concat!("not an event group: ", stringify!($($other)*)))
    };
    ($($input:tt)*) => {
        $crate::events::ignored!(@ [] $($input)*)
    };
}

pub(crate) use ignored;
