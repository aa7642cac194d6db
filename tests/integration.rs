//! The one integration-test binary: behaviour a user of cn-run would notice, run against
//! real processes, real git repositories in temp dirs and local HTTP servers on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
