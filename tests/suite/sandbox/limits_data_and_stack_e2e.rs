//! Third round (issue 29, resources): data and stack together. Without a cgroup each process
//! had `RLIMIT_DATA` of the memory limit and a hard stack limit of the memory limit too, so a
//! command that filled its heap and then raised its soft stack limit to the hard one got
//! about twice `limits.memory`. Each payload touches a heap of H MiB (printing `heap-TAG`)
//! and then a stack of S MiB (by `alloca` or by recursion; printing `got-TAG`), or the stack
//! first; under 96 MiB every H + S is past the limit, each part alone within it. Where the
//! run's cgroup binds (root) it bounds the sum; elsewhere the supervisor splits the limit
//! between data and stack. The control with roomy limits gets every one.

use std::path::Path;
use std::process::Command;

use super::containment_scene::{Scene, User, bash, user_available};

const TIGHT: &str = "tools: {bash: {limits: {memory: 96MiB}}}\n";
const ROOMY: &str = "tools: {bash: {limits: {memory: 3GiB}}}\n";

const BOTH_C: &str = r#"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
static long deep(long n) { volatile char pad[4096]; memset((char *)pad, 1, sizeof pad); return n ? deep(n - 1) + pad[7] : 0; }
static void heap(size_t mib, const char *tag) {
    char *p = malloc(mib << 20); if (!p) { printf("no-heap-%s\n", tag); exit(3); }
    memset(p, 1, mib << 20); printf("heap-%s\n", tag); fflush(stdout);
}
static void stack(char how, size_t mib) {
    if (how == 'a') { char *p = __builtin_alloca(mib << 20); memset(p, 1, mib << 20); }
    else { deep((long)(mib << 20) / 4200); }
}
int main(int argc, char **argv) {
    size_t h = (size_t)atoi(argv[2]), s = (size_t)atoi(argv[3]);
    if (argv[1][1] == 'h') { heap(h, argv[4]); stack(argv[1][0], s); }
    else { stack(argv[1][0], s); heap(h, argv[4]); }
    printf("got-%s\n", argv[4]);
    return 0;
}
"#;

/// (how: stack kind then order, heap MiB, stack MiB, tag): every sum past 96 MiB.
const CASES: &[(&str, u32, u32, &str)] = &[
    ("ah", 64, 48, "heap-then-alloca"),
    ("rh", 64, 48, "heap-then-recursion"),
    ("ah", 40, 72, "small-heap-big-alloca"),
    ("rh", 40, 72, "small-heap-deep-recursion"),
    ("as", 64, 48, "alloca-then-heap"),
    ("rs", 64, 48, "recursion-then-heap"),
    ("ah", 80, 24, "big-heap-then-alloca"),
];

/// The payload, built in `dir` (None when no C compiler is here).
fn build(dir: &Path) -> Option<()> {
    std::fs::write(dir.join("both.c"), BOTH_C).unwrap();
    let ok = Command::new("cc")
        .args(["-O0", "-o", "both", "both.c"])
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: no C compiler to build the data-and-stack payload");
    }
    ok.then_some(())
}

/// The tool outputs of every case run as `user` under `limits`, each raising its soft stack
/// limit to the hard one first.
fn outputs(user: User, limits: &str) -> Option<(String, Scene)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    build(&s.ws)?;
    let calls: Vec<_> = CASES
        .iter()
        .map(|(how, h, st, tag)| {
            bash(&format!(
                "ulimit -s $(ulimit -Hs); ./both {how} {h} {st} {tag}; echo ran-{tag}"
            ))
        })
        .collect();
    let r = s.run(&calls, limits);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = s.tool_outputs();
    for (.., tag) in CASES {
        assert!(
            out.contains(&format!("ran-{tag}")),
            "{tag} did not run: {out}"
        );
    }
    Some((out, s))
}

#[test]
fn no_process_holds_a_full_heap_and_a_full_stack_past_the_memory_limit() {
    for user in [User::Root, User::Nobody] {
        let Some((out, _s)) = outputs(user, TIGHT) else {
            continue;
        };
        let got: Vec<_> = CASES
            .iter()
            .filter(|c| out.contains(&format!("got-{}", c.3)))
            .map(|c| c.3)
            .collect();
        assert!(got.is_empty(), "{user:?} got {got:?}\n{out}");
        // The heap alone fits: what is bounded is the sum.
        assert!(out.contains("heap-heap-then-alloca"), "{user:?}: {out}");
    }
}

#[test]
fn control_with_roomy_limits_every_data_and_stack_payload_gets_both() {
    for user in [User::Root, User::Nobody] {
        let Some((out, _s)) = outputs(user, ROOMY) else {
            continue;
        };
        for (.., tag) in CASES {
            assert!(out.contains(&format!("got-{tag}")), "{user:?} {tag}\n{out}");
        }
    }
}
