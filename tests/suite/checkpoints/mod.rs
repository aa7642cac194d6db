//! Git checkpoints, the diff, worktrees.

mod checkpoint;
mod checkpoint_e2e;
mod checkpoint_links;
mod checkpoint_scan;
mod checkpoint_skipped_e2e;
mod checkpoint_storage_e2e;
mod checkpoint_watch;
mod diff_complete_e2e;
mod worktree_prune_e2e;
