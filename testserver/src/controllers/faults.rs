//! Scripted kubelet faults: what the simulated kubelets (`kubelet.rs`) do to the
//! containers of chosen pods instead of running them happily, so a test can see what
//! kube-controller-manager, kubectl and an operator see when a container cannot start,
//! keeps crashing, fails, or never becomes ready.
//!
//! A fault is a rule ([`PodFault`]) selecting pods by name, by label selector or by
//! container image, and saying what happens to the containers it selects
//! ([`FaultAction`]): the image pull fails (`ErrImagePull`, then `ImagePullBackOff`, as
//! `pkg/kubelet/images/image_manager.go` reports it), the container exits with a code
//! after running a while (`CrashLoopBackOff` under `restartPolicy: Always` / `OnFailure`,
//! a `Failed` pod under `Never`, as `pkg/kubelet/kuberuntime/kuberuntime_manager.go` and
//! `pkg/kubelet/kubelet_pods.go` `getPhase` decide), or it runs and never becomes ready
//! (a readiness probe that never passes). Rules come from [`crate::ClusterConfig::pod_fault`]
//! at start and [`crate::TestServer::add_pod_fault`] while the server runs; the first rule
//! that selects a container wins.
//!
//! A pod can also script its own fault with the annotation [`FAULT_ANNOTATION`]
//! (`kubegen.io/fault`), which wins over every rule and applies to all its containers, so
//! a kubectl-driven test or a user of the binary needs no Rust:
//!
//! | value                       | what the containers do                                 |
//! |-----------------------------|--------------------------------------------------------|
//! | `image-pull`                | the image pull fails: `ErrImagePull`, `ImagePullBackOff` |
//! | `crash-loop`                | exit 1 after the pod run time (`CrashLoopBackOff`)     |
//! | `exit-code=N`               | exit `N` after the pod run time                         |
//! | `never-ready`               | run, never ready                                        |
//!
//! `crash-loop` and `exit-code=N` take an optional run time, `,after=30s` (Go duration
//! syntax: `500ms`, `10s`, `1m30s`, `1h`). A value that does not parse is a
//! [`PodFaultError::Annotation`]: the kubelet logs it and runs the pod without a fault.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::api::core::v1::{Container, Pod};
use parking_lot::RwLock;
use tokio::sync::Notify;

use crate::selectors::LabelSelector;

/// The pod annotation that scripts a fault for the pod's own containers (see the module
/// docs for its values).
pub const FAULT_ANNOTATION: &str = "kubegen.io/fault";

/// A fault rule that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PodFaultError {
    /// The label selector of [`PodFault::on_label`] does not parse.
    #[error("pod fault label selector {selector:?}: {message}")]
    Selector {
        /// The selector as given.
        selector: String,
        /// Why it does not parse.
        message: String,
    },
    /// The value of a pod's `kubegen.io/fault` annotation does not parse.
    #[error("annotation kubegen.io/fault={value:?}: {reason}")]
    Annotation {
        /// The annotation's value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// What happens to a container a [`PodFault`] selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultAction {
    /// Every pull of the container's image fails: waiting `ErrImagePull`, then
    /// `ImagePullBackOff` until the next attempt (10 s, doubling to 5 min).
    ImagePull,
    /// The container exits with `code` after running `after` (the cluster's pod run time
    /// when `None`); restarted per the pod's `restartPolicy`, with the kubelet's back-off.
    Exit {
        /// The exit code (0 is a success).
        code: i32,
        /// How long each run lasts.
        after: Option<Duration>,
    },
    /// The container runs but never becomes ready.
    NeverReady,
}

/// Which pods a [`PodFault`] selects.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// One pod, by namespace and name.
    Pod { namespace: String, name: String },
    /// The pods a label selector selects (the parse error, if it does not parse).
    Labels {
        text: String,
        parsed: Result<LabelSelector, String>,
    },
    /// The containers running this image.
    Image(String),
}

/// A scripted kubelet fault: which pods (and containers) it selects and what happens to
/// them. Built as a value and handed to [`crate::ClusterConfig::pod_fault`] or
/// [`crate::TestServer::add_pod_fault`]:
///
/// ```
/// use std::time::Duration;
/// use kubegen_testserver::{ClusterConfig, PodFault};
///
/// let config = ClusterConfig::default()
///     // the web pods' containers exit 1 after 5 s, again and again: CrashLoopBackOff
///     .pod_fault(PodFault::on_label("app=web").crash_loop().after(Duration::from_secs(5)))
///     // no pull of this image ever succeeds: ErrImagePull, ImagePullBackOff
///     .pod_fault(PodFault::on_image("registry.example/app:broken").image_pull_failure())
///     // this one pod runs and is never ready
///     .pod_fault(PodFault::on_pod("default", "slow-0").never_ready());
/// # let _ = config;
/// ```
///
/// A rule without an action set crashes its containers (exit code 1, as
/// [`PodFault::crash_loop`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodFault {
    target: Target,
    container: Option<String>,
    action: FaultAction,
}

impl PodFault {
    fn new(target: Target) -> Self {
        PodFault {
            target,
            container: None,
            action: FaultAction::Exit {
                code: 1,
                after: None,
            },
        }
    }

    /// Selects the pod `namespace`/`name`.
    pub fn on_pod(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        PodFault::new(Target::Pod {
            namespace: namespace.into(),
            name: name.into(),
        })
    }

    /// Selects the pods whose labels `selector` selects (`app=web`, `tier in (a,b)`, ...,
    /// the `labelSelector` syntax). A selector that does not parse selects nothing, and
    /// the server refuses the rule ([`PodFaultError::Selector`]).
    pub fn on_label(selector: impl Into<String>) -> Self {
        let text = selector.into();
        let parsed = LabelSelector::parse(&text).map_err(|e| e.to_string());
        PodFault::new(Target::Labels { text, parsed })
    }

    /// Selects the containers running `image`, as written in the pod or as the runtime
    /// names it (`nginx` is `docker.io/library/nginx:latest`); an image without a tag or
    /// digest selects every tag of its repository.
    pub fn on_image(image: impl Into<String>) -> Self {
        PodFault::new(Target::Image(image.into()))
    }

    /// Only the container named `name` of the selected pods.
    #[must_use]
    pub fn container(mut self, name: impl Into<String>) -> Self {
        self.container = Some(name.into());
        self
    }

    /// The image pull fails ([`FaultAction::ImagePull`]).
    #[must_use]
    pub fn image_pull_failure(mut self) -> Self {
        self.action = FaultAction::ImagePull;
        self
    }

    /// The containers exit 1 after their run time ([`PodFault::after`]): a crash loop
    /// under `restartPolicy: Always` or `OnFailure`.
    #[must_use]
    pub fn crash_loop(self) -> Self {
        self.exit_code(1)
    }

    /// The containers exit with `code` after their run time ([`PodFault::after`]).
    #[must_use]
    pub fn exit_code(mut self, code: i32) -> Self {
        let after = match self.action {
            FaultAction::Exit { after, .. } => after,
            _ => None,
        };
        self.action = FaultAction::Exit { code, after };
        self
    }

    /// How long each run of an exiting container lasts (default: the cluster's pod run
    /// time); makes the rule an exit with code 1 unless [`PodFault::exit_code`] said
    /// otherwise.
    #[must_use]
    pub fn after(mut self, run_time: Duration) -> Self {
        let code = match self.action {
            FaultAction::Exit { code, .. } => code,
            _ => 1,
        };
        self.action = FaultAction::Exit {
            code,
            after: Some(run_time),
        };
        self
    }

    /// The containers run and never become ready ([`FaultAction::NeverReady`]).
    #[must_use]
    pub fn never_ready(mut self) -> Self {
        self.action = FaultAction::NeverReady;
        self
    }

    /// What the rule does.
    pub fn action(&self) -> FaultAction {
        self.action
    }

    /// Why the rule cannot be used, if it cannot (a label selector that does not parse).
    pub fn validate(&self) -> Result<(), PodFaultError> {
        match &self.target {
            Target::Labels {
                text,
                parsed: Err(message),
            } => Err(PodFaultError::Selector {
                selector: text.clone(),
                message: message.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Whether the rule selects `container` of `pod`.
    fn selects(&self, pod: &Pod, container: &Container) -> bool {
        if self
            .container
            .as_deref()
            .is_some_and(|name| name != container.name)
        {
            return false;
        }
        match &self.target {
            Target::Pod { namespace, name } => {
                pod.metadata.namespace.as_deref() == Some(namespace.as_str())
                    && pod.metadata.name.as_deref() == Some(name.as_str())
            }
            Target::Labels { parsed, .. } => {
                let empty = BTreeMap::new();
                parsed
                    .as_ref()
                    .is_ok_and(|s| s.matches(pod.metadata.labels.as_ref().unwrap_or(&empty)))
            }
            Target::Image(image) => image_matches(image, container.image.as_deref()),
        }
    }
}

/// Whether a rule's `wanted` image selects a container running `image`.
fn image_matches(wanted: &str, image: Option<&str>) -> bool {
    let Some(image) = image else {
        return false;
    };
    let (wanted_full, image_full) = (normalize_image(wanted), normalize_image(image));
    if wanted_full == image_full {
        return true;
    }
    let last = wanted.rsplit('/').next().unwrap_or_default();
    let untagged = !last.contains(':') && !last.contains('@');
    untagged && repository(&image_full) == repository(&wanted_full)
}

/// An image reference without its tag or digest.
fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => image,
    }
}

/// Parses a `kubegen.io/fault` annotation value.
pub(crate) fn parse_annotation(value: &str) -> Result<FaultAction, PodFaultError> {
    let bad = |reason: &str| PodFaultError::Annotation {
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let mut parts = value.split(',').map(str::trim);
    let kind = parts.next().unwrap_or_default();
    let mut action = match kind.split_once('=') {
        None if kind == "image-pull" => FaultAction::ImagePull,
        None if kind == "never-ready" => FaultAction::NeverReady,
        None if kind == "crash-loop" => FaultAction::Exit {
            code: 1,
            after: None,
        },
        Some(("exit-code", code)) => FaultAction::Exit {
            code: code
                .trim()
                .parse()
                .map_err(|_| bad("exit-code takes an integer"))?,
            after: None,
        },
        _ => {
            return Err(bad(
                "expected image-pull, crash-loop, exit-code=N or never-ready",
            ));
        }
    };
    for option in parts {
        match (option.split_once('='), &mut action) {
            (Some(("after", d)), FaultAction::Exit { after, .. }) => {
                *after = Some(
                    parse_go_duration(d.trim())
                        .ok_or_else(|| bad("after takes a duration such as 10s or 1m30s"))?,
                );
            }
            _ => return Err(bad(&format!("unexpected option {option:?}"))),
        }
    }
    Ok(action)
}

/// A Go `time.ParseDuration` duration made of `h`, `m`, `s` and `ms` parts (`1m30s`,
/// `500ms`); `None` when it is anything else or negative.
fn parse_go_duration(text: &str) -> Option<Duration> {
    if text == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits);
        let number: f64 = number.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += Duration::try_from_secs_f64(number * seconds).ok()?;
        rest = tail;
    }
    Some(total)
}

/// The fault rules in force, shared by the server (which adds and clears them) and the
/// kubelets (which read them, and resync every pod when they change).
#[derive(Debug, Default)]
pub(crate) struct PodFaults {
    rules: RwLock<Vec<PodFault>>,
    changed: Notify,
}

impl PodFaults {
    /// Adds `rule` (after the others: the first rule selecting a container wins).
    pub(crate) fn add(&self, rule: PodFault) -> Result<(), PodFaultError> {
        rule.validate()?;
        self.rules.write().push(rule);
        self.changed.notify_one();
        Ok(())
    }

    /// Removes every rule.
    pub(crate) fn clear(&self) {
        self.rules.write().clear();
        self.changed.notify_one();
    }

    /// Waits until the rules change (a change made while nobody waited is not lost).
    pub(crate) async fn changed(&self) {
        self.changed.notified().await;
    }

    /// What happens to each container of `pod` (in `spec.containers` order): its
    /// annotation's action for every container if it has one that parses (the parse error
    /// otherwise, beside the rules' actions), else the first rule selecting each container.
    pub(crate) fn actions(&self, pod: &Pod) -> (Vec<Option<FaultAction>>, Option<PodFaultError>) {
        let containers = pod.spec.as_ref().map_or(&[][..], |s| &s.containers[..]);
        let annotation = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(FAULT_ANNOTATION))
            .map(|v| parse_annotation(v));
        match annotation {
            Some(Ok(action)) => (vec![Some(action); containers.len()], None),
            other => {
                let rules = self.rules.read();
                let actions = containers
                    .iter()
                    .map(|c| rules.iter().find(|r| r.selects(pod, c)).map(|r| r.action))
                    .collect();
                (actions, other.and_then(Result::err))
            }
        }
    }
}

/// An image reference as the container runtime reports it: `nginx` is
/// `docker.io/library/nginx:latest`.
pub(crate) fn normalize_image(image: &str) -> String {
    let first = image.split('/').next().unwrap_or_default();
    let has_registry =
        image.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let full = if has_registry {
        image.to_string()
    } else if image.contains('/') {
        format!("docker.io/{image}")
    } else {
        format!("docker.io/library/{image}")
    };
    let last = full.rsplit('/').next().unwrap_or_default();
    if last.contains(':') || last.contains('@') {
        full
    } else {
        format!("{full}:latest")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(annotation: Option<&str>) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"},
                         "annotations": annotation.map(|a| serde_json::json!({FAULT_ANNOTATION: a}))},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"},
                                    {"name": "sidecar", "image": "busybox"}]},
        }))
        .unwrap_or_default()
    }

    #[test]
    fn annotations_parse_and_bad_ones_are_typed_errors() {
        assert_eq!(parse_annotation("image-pull"), Ok(FaultAction::ImagePull));
        assert_eq!(parse_annotation("never-ready"), Ok(FaultAction::NeverReady));
        assert_eq!(
            parse_annotation("crash-loop"),
            Ok(FaultAction::Exit {
                code: 1,
                after: None
            })
        );
        assert_eq!(
            parse_annotation("exit-code=3, after=1m30s"),
            Ok(FaultAction::Exit {
                code: 3,
                after: Some(Duration::from_secs(90))
            })
        );
        assert_eq!(
            parse_annotation("crash-loop,after=500ms"),
            Ok(FaultAction::Exit {
                code: 1,
                after: Some(Duration::from_millis(500))
            })
        );
        for bad in [
            "explode",
            "exit-code=x",
            "never-ready,after=1s",
            "crash-loop,after=soon",
            "",
        ] {
            assert!(
                matches!(parse_annotation(bad), Err(PodFaultError::Annotation { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn rules_select_by_name_label_and_image_and_the_annotation_wins() {
        let faults = PodFaults::default();
        assert!(matches!(
            faults.add(PodFault::on_label("app in (web")),
            Err(PodFaultError::Selector { .. })
        ));
        let p = pod(None);
        assert_eq!(faults.actions(&p).0, [None, None]);
        assert_eq!(
            faults.add(PodFault::on_image("busybox").never_ready()),
            Ok(())
        );
        assert_eq!(
            faults.add(PodFault::on_label("app=web").image_pull_failure()),
            Ok(())
        );
        assert_eq!(
            faults.actions(&p).0,
            [Some(FaultAction::ImagePull), Some(FaultAction::NeverReady)]
        );
        faults.clear();
        assert_eq!(
            faults.add(
                PodFault::on_pod("default", "web-0")
                    .container("app")
                    .exit_code(2),
            ),
            Ok(())
        );
        let exit2 = Some(FaultAction::Exit {
            code: 2,
            after: None,
        });
        assert_eq!(faults.actions(&p).0, [exit2, None]);
        let annotated = pod(Some("never-ready"));
        assert_eq!(
            faults.actions(&annotated).0,
            [Some(FaultAction::NeverReady); 2]
        );
        let (actions, error) = faults.actions(&pod(Some("bogus")));
        assert_eq!(actions, [exit2, None], "a bad annotation leaves the rules");
        assert!(error.is_some());
    }

    #[test]
    fn images_match_as_written_or_as_the_runtime_names_them() {
        assert!(image_matches("nginx", Some("nginx:1.27")));
        assert!(image_matches(
            "docker.io/library/nginx:1.27",
            Some("nginx:1.27")
        ));
        assert!(!image_matches("nginx:1.28", Some("nginx:1.27")));
        assert!(!image_matches("nginx", Some("nginxinc/nginx")));
        assert!(!image_matches("nginx", None));
        assert_eq!(parse_go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_go_duration("2"), None);
    }
}
