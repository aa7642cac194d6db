//! Run stores and fleet exports (k8s, GitHub matrix).

mod export;
mod fleet_export;
mod store_e2e;
