//! Second red-team round (issue 29, resources): memory a per-process data limit does not
//! count — the main thread's stack, which a command lets grow by raising its soft stack
//! limit to the hard one (`ulimit -s $(ulimit -Hs)`: often unlimited) and then fills:
//! 200 MiB by `alloca` and 200 MiB by deep recursion, under a 96 MiB memory limit. Each
//! payload prints `got-TAG` only when it touched all it asked. As root where the run's
//! cgroup binds, the cgroup bounds it; elsewhere (an ordinary user, root without a cgroup)
//! the hard stack limit the supervisor sets does. The control with roomy limits gets every
//! one.

use std::path::Path;
use std::process::Command;

use super::containment_scene::{Scene, User, bash, user_available};

const TIGHT: &str = "tools: {bash: {limits: {memory: 96MiB}}}\n";
const ROOMY: &str = "tools: {bash: {limits: {memory: 3GiB}}}\n";

const STACK_C: &str = r#"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
static long deep(long n) { volatile char pad[4096]; memset((char *)pad, 1, sizeof pad); return n ? deep(n - 1) + pad[7] : 0; }
int main(int argc, char **argv) {
    size_t mib = (size_t)atoi(argv[2]);
    if (argv[1][0] == 'a') { char *p = __builtin_alloca(mib << 20); memset(p, 1, mib << 20); }
    else { deep((long)(mib << 20) / 4200); }
    printf("got-%s\n", argv[3]);
    return 0;
}
"#;

/// The stack eater, built in `dir` (None when no C compiler is here).
fn build(dir: &Path) -> Option<()> {
    std::fs::write(dir.join("stk.c"), STACK_C).unwrap();
    let ok = Command::new("cc")
        .args(["-O0", "-o", "stk", "stk.c"])
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: no C compiler to build the stack payload");
    }
    ok.then_some(())
}

/// The tags whose payload got its 200 MiB, as `user` under `limits`.
fn got(user: User, limits: &str) -> Option<(Vec<String>, Scene)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    build(&s.ws)?;
    let calls = vec![
        bash("ulimit -s $(ulimit -Hs) && ./stk a 200 alloca; echo ran-alloca"),
        bash("ulimit -s $(ulimit -Hs) && ./stk r 200 recursion; echo ran-recursion"),
    ];
    let r = s.run(&calls, limits);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = s.tool_outputs();
    for t in ["alloca", "recursion"] {
        assert!(out.contains(&format!("ran-{t}")), "{t} did not run: {out}");
    }
    let got = ["alloca", "recursion"]
        .iter()
        .filter(|t| out.contains(&format!("got-{t}")))
        .map(|t| (*t).to_owned())
        .collect();
    Some((got, s))
}

#[test]
fn no_command_grows_its_stack_past_the_memory_limit() {
    for user in [User::Root, User::Nobody] {
        let Some((got, s)) = got(user, TIGHT) else {
            continue;
        };
        assert!(got.is_empty(), "{user:?} got {got:?}\n{}", s.tool_outputs());
    }
}

#[test]
fn control_with_roomy_limits_every_stack_payload_gets_what_it_asks() {
    for user in [User::Root, User::Nobody] {
        let Some((got, s)) = got(user, ROOMY) else {
            continue;
        };
        assert_eq!(
            got,
            ["alloca", "recursion"],
            "{user:?}\n{}",
            s.tool_outputs()
        );
    }
}
