//! The one integration-test binary: behaviour a user of cn-run would notice, run against
//! real processes, real git repositories in temp dirs and local HTTP servers on loopback.

mod support;
mod suite;
