//! Who makes a request (kube-apiserver's `k8s.io/apiserver/pkg/authentication/user`
//! `user.Info` and its well-known names).

use std::collections::BTreeMap;

/// The anonymous user's name (`user.Anonymous`).
pub const ANONYMOUS: &str = "system:anonymous";
/// The group of requests without credentials (`user.AllUnauthenticated`).
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group every authenticated user is in (`user.AllAuthenticated`).
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The superuser group: its members pass every authorization check (`user.SystemPrivilegedGroup`).
pub const SYSTEM_MASTERS: &str = "system:masters";

/// A user: name, uid, groups and extra attributes (kube-apiserver's `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// The user name (`alice`, `system:serviceaccount:default:builder`).
    pub name: String,
    /// A unique id, or empty.
    pub uid: String,
    /// The groups the user is in.
    pub groups: Vec<String>,
    /// Extra attributes (a service account token's pod name, `authentication.kubernetes.io/credential-id`, ...).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user named `name` in `groups`.
    pub fn new(
        name: impl Into<String>,
        groups: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        UserInfo {
            name: name.into(),
            uid: String::new(),
            groups: groups.into_iter().map(Into::into).collect(),
            extra: BTreeMap::new(),
        }
    }

    /// The user of a request with no credentials (kube-apiserver's anonymous
    /// authenticator).
    pub fn anonymous() -> Self {
        UserInfo::new(ANONYMOUS, [ALL_UNAUTHENTICATED])
    }

    /// The in-process front's user when a request carries no credentials: the API
    /// server's own loopback identity (`system:apiserver` in `system:masters`), as the
    /// cluster's controllers and the fakes have always been all-powerful.
    pub fn loopback() -> Self {
        UserInfo::new("system:apiserver", [SYSTEM_MASTERS, ALL_AUTHENTICATED])
    }

    /// `self` with `system:authenticated` added unless it is present or the user is
    /// anonymous (kube-apiserver's `group.AuthenticatedGroupAdder`).
    pub fn with_authenticated_group(mut self) -> Self {
        if self.name != ANONYMOUS && !self.groups.iter().any(|g| g == ALL_AUTHENTICATED) {
            self.groups.push(ALL_AUTHENTICATED.into());
        }
        self
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}
