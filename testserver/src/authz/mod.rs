//! Authorization (kube-apiserver's `k8s.io/apiserver/pkg/authorization/authorizer`):
//! whether a user may make a request, decided from the request's attributes alone
//! (`authorizer.Attributes`). The mode is `--authorization-mode`: `AlwaysAllow` (the
//! default, and what the test server always did) or `RBAC`. Members of `system:masters`
//! pass every check before the mode is asked, as kube-apiserver's privileged-group
//! authorizer runs first.

pub(crate) mod rbac;

use crate::authn::{SYSTEM_MASTERS, UserInfo};

/// `--authorization-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthorizationMode {
    /// Everything is allowed (kube-apiserver's `AlwaysAllow`).
    #[default]
    AlwaysAllow,
    /// Roles and bindings decide (kube-apiserver's `RBAC`).
    Rbac,
}

/// What an authorizer is asked about (kube-apiserver's `authorizer.AttributesRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Attributes {
    /// Who asks.
    pub(crate) user: UserInfo,
    /// The verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, `impersonate`, `bind`, `escalate`, ...; for a non-resource
    /// request the lower-cased HTTP method.
    pub(crate) verb: String,
    /// Whether the request is for a resource (else for a non-resource path).
    pub(crate) resource_request: bool,
    /// The API group (`""` for core).
    pub(crate) api_group: String,
    /// The API version.
    pub(crate) api_version: String,
    /// The resource plural.
    pub(crate) resource: String,
    /// The subresource, or empty.
    pub(crate) subresource: String,
    /// The namespace, or empty.
    pub(crate) namespace: String,
    /// The object name, or empty.
    pub(crate) name: String,
    /// The path of a non-resource request.
    pub(crate) path: String,
}

/// An authorizer's answer (kube-apiserver's `authorizer.Decision` with its reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Allowed, with the reason (e.g. the binding that allowed it).
    Allow(String),
    /// Not allowed: no rule allows it (RBAC never denies explicitly), with the reason.
    NoOpinion(String),
}

impl Decision {
    /// Whether the request may go on.
    pub(crate) fn allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }

    /// The reason given.
    pub(crate) fn reason(&self) -> &str {
        match self {
            Decision::Allow(r) | Decision::NoOpinion(r) => r,
        }
    }
}

/// The server's authorizer chain.
#[derive(Debug)]
pub(crate) struct Authorizer {
    mode: AuthorizationMode,
}

impl Authorizer {
    /// The authorizer for `mode`.
    pub(crate) fn new(mode: AuthorizationMode) -> Self {
        Authorizer { mode }
    }

    /// The mode.
    pub(crate) fn mode(&self) -> AuthorizationMode {
        self.mode
    }

    /// Decides `attributes` against the objects of `engine`.
    pub(crate) fn authorize(&self, engine: &crate::Engine, attributes: &Attributes) -> Decision {
        if attributes.user.in_group(SYSTEM_MASTERS) {
            return Decision::Allow(String::new());
        }
        match self.mode {
            AuthorizationMode::AlwaysAllow => Decision::Allow(String::new()),
            AuthorizationMode::Rbac => rbac::authorizer::authorize(engine.store(), attributes),
        }
    }

    /// The rules `user` has in `namespace` (kube's `authorizer.RuleResolver.RulesFor`,
    /// what a SelfSubjectRulesReview answers): resource rules, non-resource rules,
    /// whether the list is incomplete, and the errors met. `AlwaysAllow` has every rule.
    pub(crate) fn rules_for(
        &self,
        engine: &crate::Engine,
        user: &UserInfo,
        namespace: &str,
    ) -> (Vec<rbac::rule::PolicyRule>, Vec<String>) {
        match self.mode {
            AuthorizationMode::AlwaysAllow => (
                vec![
                    rbac::rule::PolicyRule::resource(&["*"], &["*"], &["*"]),
                    rbac::rule::PolicyRule::urls(&["*"], &["*"]),
                ],
                Vec::new(),
            ),
            AuthorizationMode::Rbac => {
                let (rules, errors) = rbac::authorizer::rules_for(engine.store(), user, namespace);
                (rules, errors.iter().map(ToString::to_string).collect())
            }
        }
    }
}
