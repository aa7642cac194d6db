//! The job file: parsing, located errors, params, rules, schemas, the resolved config.

mod example_jobs;
mod job_file;
mod params_e2e;
mod rules_e2e;
mod run_config_e2e;
mod schemas;
mod yaml_shape_e2e;
