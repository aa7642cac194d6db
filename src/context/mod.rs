//! What a conversation costs: tokens (for compaction) and dollars (for budgets).

pub mod compaction;
pub mod pricing;
pub mod tokens;
