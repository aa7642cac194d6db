//! Containment of commands: the sandbox, its limits, what it hides, git kept safe.

mod containment_caps_e2e;
mod containment_e2e;
mod containment_git_e2e;
mod containment_holder_e2e;
mod containment_leaks_e2e;
mod containment_limits_e2e;
mod containment_pids_e2e;
pub(super) mod containment_scene;
mod containment_sockets_e2e;
mod containment_sysctl_e2e;
mod edges_bare_repo_e2e;
mod git_credentials_e2e;
mod git_guard_e2e;
mod git_guard_nested_e2e;
mod git_guard_replaced_e2e;
mod limits_memory_e2e;
mod network_hosts_e2e;
mod redteam2_caps_e2e;
mod redteam2_fetch_e2e;
mod redteam2_git_e2e;
mod redteam2_resources_e2e;
mod redteam2_resume_e2e;
mod redteam2_sockets_e2e;
mod redteam2_tools_e2e;
mod redteam_caps_e2e;
mod redteam_fetch_e2e;
mod redteam_git_e2e;
mod redteam_resources_e2e;
mod redteam_resume_e2e;
mod redteam_sockets_e2e;
mod redteam_tools_e2e;
pub(super) mod resources;
mod restricted_pod_e2e;
#[allow(clippy::module_inception)]
mod sandbox;
mod sandbox_deferred_e2e;
mod sigkill_e2e;
