//! RBAC (kube-apiserver's `--authorization-mode=RBAC`), one concept a file:
//!
//! * [`rule`]: one `PolicyRule` and whether it allows a request;
//! * [`covers`]: whether rules cover other rules (escalation checks);
//! * [`resolver`]: which rules apply to a user in a namespace, from the store's bindings;
//! * [`authorizer`]: the RBAC decision and its reason;
//! * [`escalation`]: no role or binding grants more than its writer holds;
//! * [`aggregation`]: the rules an aggregated ClusterRole gets;
//! * [`bootstrap`]: the roles and bindings every server starts with.

pub(crate) mod aggregation;
pub(crate) mod authorizer;
pub(crate) mod bootstrap;
pub(crate) mod covers;
pub(crate) mod escalation;
pub(crate) mod resolver;
pub(crate) mod rule;
