//! Permissions and the safety model: rules, the command evaluator, untrusted mode, secrets.

mod command_safety;
mod file_rule_paths;
mod one_reading_e2e;
#[allow(clippy::module_inception)]
mod permissions;
mod permissions_e2e;
mod policy_classes;
pub(super) mod secrets_e2e;
mod untrusted_e2e;
