use super::*;

fn policy(permission: Permission) -> Decision {
    Decision {
        permission,
        rule: Some("Bash(*)".into()),
        source: Source::Job,
        reason: "a rule".into(),
        allow_hint: Some("Bash(make)".into()),
    }
}

fn said(s: HookDecision) -> HookAnswer {
    HookAnswer {
        said: Some(s),
        rule: Some("PreToolUse `x`".into()),
        reason: Some("hook says".into()),
        ..HookAnswer::default()
    }
}

#[test]
fn a_hooks_allow_answers_an_ask_but_never_opens_an_exclude() {
    match combine(policy(Permission::Ask), &said(HookDecision::Allow)) {
        Gated::Answered(d) => assert_eq!(d.source, Source::Hook),
        other => panic!("{other:?}"),
    }
    for s in [
        HookDecision::Allow,
        HookDecision::Ask,
        HookDecision::Defer,
        HookDecision::Block,
    ] {
        assert_eq!(
            combine(policy(Permission::Exclude), &said(s)),
            Gated::Policy(policy(Permission::Exclude)),
            "{s:?}"
        );
    }
}

#[test]
fn a_hook_tightens_what_the_policy_allows() {
    let Gated::Refused(d) = combine(policy(Permission::Allow), &said(HookDecision::Block)) else {
        panic!()
    };
    assert_eq!(
        (d.permission, d.reason.as_str()),
        (Permission::Exclude, "hook says")
    );
    assert!(matches!(
        combine(policy(Permission::Allow), &said(HookDecision::Ask)),
        Gated::Asks(_)
    ));
    assert!(matches!(
        combine(policy(Permission::Allow), &said(HookDecision::Defer)),
        Gated::Defer(_)
    ));
    assert_eq!(
        combine(policy(Permission::Allow), &said(HookDecision::Allow)),
        Gated::Policy(policy(Permission::Allow))
    );
    assert_eq!(
        combine(policy(Permission::Ask), &HookAnswer::default()),
        Gated::Policy(policy(Permission::Ask))
    );
}

#[test]
fn an_approval_answers_an_ask_and_a_denial_always_holds() {
    let Gated::Answered(d) = approved(policy(Permission::Ask), &Approval::Approve) else {
        panic!()
    };
    assert_eq!(d.source, Source::Approval);
    assert_eq!(
        approved(policy(Permission::Exclude), &Approval::Approve),
        Gated::Policy(policy(Permission::Exclude)),
        "no approval opens an exclude"
    );
    let Gated::Refused(d) = approved(
        policy(Permission::Allow),
        &Approval::Deny(Some("no".into())),
    ) else {
        panic!()
    };
    assert!(d.reason.contains("no"));
}

#[test]
fn an_ask_into_git_internals_is_answered_by_a_rule_only() {
    let git = Decision {
        rule: Some(crate::permissions::GIT_INTERNALS_RULE.to_owned()),
        ..policy(Permission::Ask)
    };
    assert_eq!(
        combine(git.clone(), &said(HookDecision::Allow)),
        Gated::Policy(git.clone())
    );
    assert_eq!(
        approved(git.clone(), &Approval::Approve),
        Gated::Policy(git)
    );
}
