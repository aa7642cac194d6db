//! Hooks (Claude Code's protocol) and deferred approvals.

mod hooks_compact_e2e;
mod hooks_defer_e2e;
mod hooks_e2e;
mod hooks_forms_e2e;
