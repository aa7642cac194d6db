//! Model providers: wire formats replayed, faults, stop reasons, compaction, cost.

mod anthropic_e2e;
mod compaction_e2e;
mod compaction_servers_e2e;
mod compaction_text_tools_e2e;
mod conformance;
mod cost_e2e;
mod faults;
mod openai_e2e;
mod provider_anthropic;
mod provider_errors;
mod provider_faults_e2e;
mod provider_openai;
mod provider_script;
mod provider_usage_e2e;
mod request_params_e2e;
mod stop_reasons_e2e;
