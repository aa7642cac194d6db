//! The run's git checkpoints, as the composition root uses them (they live in
//! `checkpoint::run`).

pub(crate) use crate::checkpoint::{Checkpoints, Early};
