//! Starting the checkpoint thread so that it runs beside the caller at once (kept in the
//! checkpoint module, its only user).
//!
//! A thread spawned on a machine with an idle core is often queued behind its parent on
//! the parent's core and starts only when the parent blocks: the idle core (often a
//! halted virtual CPU) is not asked to take it until a balancing tick, which can be
//! milliseconds away. Measured on a 2-vCPU virtual machine, the checkpoint thread started on
//! its parent's core in 7 of 8 runs, and the git status it takes (1.1 ms) ran only after
//! the parent's own set-up (0.5 ms) instead of alongside it.
//!
//! So the new thread is created pinned to the parent's core, and the parent moves itself
//! to another allowed core: the new thread runs at once where the parent was, and the
//! parent resumes on the other core. Both then get their full affinity back, so the
//! scheduler stays free to place them. Where affinity cannot be read or set, or only one
//! core is allowed, this is a plain spawn.

use std::io;
use std::thread::{Builder, JoinHandle};

use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
use nix::unistd::Pid;

/// Spawns `f` on a thread named `name` that starts right away on this core while the
/// calling thread moves to another.
pub(crate) fn spawn_beside<T, F>(name: &str, f: F) -> io::Result<JoinHandle<T>>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let me = Pid::from_raw(0);
    let Some((all, here, elsewhere)) = plan(me) else {
        return Builder::new().name(name.to_owned()).spawn(f);
    };
    if sched_setaffinity(me, &here).is_err() {
        return Builder::new().name(name.to_owned()).spawn(f);
    }
    let spawned = Builder::new().name(name.to_owned()).spawn(move || {
        let _ = sched_setaffinity(Pid::from_raw(0), &all);
        f()
    });
    let _ = sched_setaffinity(me, &elsewhere);
    let _ = sched_setaffinity(me, &all);
    spawned
}

/// The allowed cores, this core alone, and the allowed cores but this one; `None` when
/// there is no other core to move to.
fn plan(me: Pid) -> Option<(CpuSet, CpuSet, CpuSet)> {
    let all = sched_getaffinity(me).ok()?;
    let cpu = sched_getcpu().ok()?;
    let mut here = CpuSet::new();
    here.set(cpu).ok()?;
    let mut elsewhere = all;
    elsewhere.unset(cpu).ok()?;
    let other = (0..CpuSet::count()).any(|c| elsewhere.is_set(c).unwrap_or(false));
    other.then_some((all, here, elsewhere))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Vec<usize> {
        let set = sched_getaffinity(Pid::from_raw(0)).unwrap();
        (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect()
    }

    #[test]
    fn both_threads_end_up_free_to_run_on_every_allowed_core() {
        let before = allowed();
        let handle = spawn_beside("spread-test", allowed).unwrap();
        let in_thread = handle.join().unwrap();
        assert_eq!(in_thread, before, "the new thread's affinity");
        assert_eq!(allowed(), before, "the caller's affinity");
    }

    #[test]
    fn the_thread_gets_its_name_and_returns_its_value() {
        let handle = spawn_beside("spread-name", || {
            std::thread::current().name().map(str::to_owned)
        })
        .unwrap();
        assert_eq!(handle.join().unwrap().as_deref(), Some("spread-name"));
    }
}
