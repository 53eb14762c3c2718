//! A [`RuleMarker`] printed back as the `+kubebuilder:rbac` marker it is read from, so
//! markers a tool writes (`kubegen-codegen rbac --from-audit`) round-trip through
//! [`RuleMarker::from_args`].
//!
//! ```text
//! +kubebuilder:rbac:groups=apps,resources=deployments;deployments/status,verbs=get;list;watch
//! +kubebuilder:rbac:groups="",resources=configmaps,verbs=get,namespace=infra
//! +kubebuilder:rbac:urls=/metrics,verbs=get
//! ```
//!
//! Arguments in the order `groups`, `resources`, `resourceNames`, `urls`, `verbs`,
//! `namespace`, `roleName`; empty lists omitted; the core group alone is `groups=""`
//! (kubebuilder's spelling; `core` among other groups); a value with a `,` or `"` is
//! quoted as a JSON string. An item with a `;` cannot be written (`;` separates items).

use std::fmt;

use super::RuleMarker;
use crate::markers::vocabulary::RBAC;

/// One argument's value: the items joined with `;`, quoted when needed.
fn value(items: &[String]) -> String {
    if let [only] = items
        && only.is_empty()
    {
        return "\"\"".into();
    }
    let joined = items
        .iter()
        .map(|i| if i.is_empty() { "core" } else { i.as_str() })
        .collect::<Vec<_>>()
        .join(";");
    if joined.contains([',', '"']) || joined.starts_with('`') {
        serde_json::to_string(&joined).unwrap_or(joined)
    } else {
        joined
    }
}

impl RuleMarker {
    /// The marker's arguments, as [`RuleMarker::from_args`] reads them.
    pub fn args_text(&self) -> String {
        let mut args = Vec::new();
        for (key, items) in [
            ("groups", &self.groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("urls", &self.urls),
            ("verbs", &self.verbs),
        ] {
            // A resource rule always names its groups (`groups=""` for core).
            let wanted = !items.is_empty() || (key == "groups" && !self.resources.is_empty());
            if wanted {
                let items = if items.is_empty() {
                    vec![String::new()]
                } else {
                    items.clone()
                };
                args.push(format!("{key}={}", value(&items)));
            }
        }
        for (key, v) in [
            ("namespace", &self.namespace),
            ("roleName", &self.role_name),
        ] {
            if let Some(v) = v {
                args.push(format!("{key}={}", value(std::slice::from_ref(v))));
            }
        }
        args.join(",")
    }
}

/// `+kubebuilder:rbac:<args>` (without the comment's `//`).
impl fmt::Display for RuleMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+{}:{}", RBAC.key, self.args_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::value::split_args;

    fn round_trip(marker: &RuleMarker) -> RuleMarker {
        let text = marker.to_string();
        let args = text
            .strip_prefix("+kubebuilder:rbac:")
            .expect("the marker's key");
        RuleMarker::from_args(&split_args(args).expect("args")).expect("marker")
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn markers_print_as_kubebuilder_spells_them_and_read_back() {
        let core = RuleMarker {
            groups: strings(&[""]),
            resources: strings(&["configmaps", "pods/status"]),
            verbs: strings(&["get", "list"]),
            namespace: Some("infra".into()),
            ..RuleMarker::default()
        };
        assert_eq!(
            core.to_string(),
            r#"+kubebuilder:rbac:groups="",resources=configmaps;pods/status,verbs=get;list,namespace=infra"#
        );
        let urls = RuleMarker {
            urls: strings(&["/metrics", "/a,b"]),
            verbs: strings(&["get"]),
            ..RuleMarker::default()
        };
        assert_eq!(
            urls.to_string(),
            r#"+kubebuilder:rbac:urls="/metrics;/a,b",verbs=get"#
        );
        let mixed = RuleMarker {
            groups: strings(&["", "apps"]),
            resources: strings(&["deployments"]),
            resource_names: strings(&["x"]),
            verbs: strings(&["*"]),
            role_name: Some("reader".into()),
            ..RuleMarker::default()
        };
        for m in [core, urls, mixed] {
            assert_eq!(round_trip(&m), m);
        }
    }
}
