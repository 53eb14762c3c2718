//! [`CaInjector`]: writes a CA bundle into webhook configurations and CRDs, as cert-manager's
//! cainjector does: `webhooks[*].clientConfig.caBundle` of named Mutating- and
//! ValidatingWebhookConfigurations, `spec.conversion.webhook.clientConfig.caBundle` of named
//! CustomResourceDefinitions.
//!
//! Objects are read and replaced as [`DynamicObject`]s (get, change, update, retried on
//! conflict), so fields this build's types do not know survive, and nothing is written when
//! the bundle is already in place.

use std::time::Duration;

use base64::Engine;
use kube_core::{
    DynamicObject,
    discovery::ApiResource,
    params::{GetParams, PostParams},
};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::client::{Client, DEFAULT_RETRY, DynamicClient, Error, retry_on_conflict};

/// An injection failed.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// Reading or writing the object failed.
    #[error("{kind} {name}: {source}")]
    Api {
        /// The object's kind.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The API error.
        #[source]
        source: Error,
    },
    /// A CRD without a conversion webhook (`spec.conversion.strategy: Webhook` with a
    /// `webhook.clientConfig`): there is nowhere to put the bundle.
    #[error("CustomResourceDefinition {0} has no conversion webhook clientConfig")]
    NoConversionWebhook(String),
}

fn resource(group: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

const VALIDATING: &str = "ValidatingWebhookConfiguration";
const MUTATING: &str = "MutatingWebhookConfiguration";
const CRD: &str = "CustomResourceDefinition";

/// Where to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Validating,
    Mutating,
    Crd,
}

impl Target {
    fn kind(self) -> &'static str {
        match self {
            Self::Validating => VALIDATING,
            Self::Mutating => MUTATING,
            Self::Crd => CRD,
        }
    }

    fn resource(self) -> ApiResource {
        match self {
            Self::Validating => resource(
                "admissionregistration.k8s.io",
                VALIDATING,
                "validatingwebhookconfigurations",
            ),
            Self::Mutating => resource(
                "admissionregistration.k8s.io",
                MUTATING,
                "mutatingwebhookconfigurations",
            ),
            Self::Crd => resource("apiextensions.k8s.io", CRD, "customresourcedefinitions"),
        }
    }
}

/// Sets `caBundle` (base64 of `bundle`) in `object`'s client configs; `Ok(true)` if anything
/// changed.
fn set_bundle(
    target: Target,
    name: &str,
    object: &mut Value,
    bundle: &str,
) -> Result<bool, InjectError> {
    let mut changed = false;
    let mut set = |client_config: &mut Value| {
        if let Value::Object(config) = client_config
            && config.get("caBundle").and_then(Value::as_str) != Some(bundle)
        {
            config.insert("caBundle".into(), Value::String(bundle.to_owned()));
            changed = true;
        }
    };
    match target {
        Target::Validating | Target::Mutating => {
            if let Some(Value::Array(webhooks)) = object.get_mut("webhooks") {
                for webhook in webhooks {
                    if let Some(config) = webhook.get_mut("clientConfig") {
                        set(config);
                    }
                }
            }
        }
        Target::Crd => match object.pointer_mut("/spec/conversion/webhook/clientConfig") {
            Some(config) => set(config),
            None => return Err(InjectError::NoConversionWebhook(name.to_owned())),
        },
    }
    Ok(changed)
}

/// Injects a CA bundle into the named webhook configurations and CRDs.
#[derive(Debug, Clone)]
pub struct CaInjector {
    client: Client,
    targets: Vec<(Target, String)>,
    resync: Duration,
}

impl CaInjector {
    /// An injector with no targets, writing through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            targets: Vec::new(),
            resync: Duration::from_secs(60),
        }
    }

    /// Injects into every webhook of the ValidatingWebhookConfiguration `name`.
    #[must_use]
    pub fn validating_webhook_configuration(mut self, name: impl Into<String>) -> Self {
        self.targets.push((Target::Validating, name.into()));
        self
    }

    /// Injects into every webhook of the MutatingWebhookConfiguration `name`.
    #[must_use]
    pub fn mutating_webhook_configuration(mut self, name: impl Into<String>) -> Self {
        self.targets.push((Target::Mutating, name.into()));
        self
    }

    /// Injects into the conversion webhook of the CustomResourceDefinition `name`
    /// (`foos.example.com`).
    #[must_use]
    pub fn crd(mut self, name: impl Into<String>) -> Self {
        self.targets.push((Target::Crd, name.into()));
        self
    }

    /// How often [`run`](Self::run) re-injects when the bundle did not change (someone may
    /// have overwritten it, or a target was created since; default 60 s).
    #[must_use]
    pub fn resync(mut self, every: Duration) -> Self {
        self.resync = every;
        self
    }

    /// Writes `bundle` (PEM) into one target; `Ok(true)` if it was written, `Ok(false)` if
    /// it was already there.
    async fn inject_one(
        &self,
        target: Target,
        name: &str,
        bundle: &str,
    ) -> Result<bool, InjectError> {
        let client = DynamicClient::all(self.client.clone(), &target.resource());
        let api = |source| InjectError::Api {
            kind: target.kind(),
            name: name.to_owned(),
            source,
        };
        // The closure's value: whether it wrote, or why it could not (not an API error,
        // so not retried).
        retry_on_conflict(DEFAULT_RETRY, || async {
            let mut object: DynamicObject = client.get(name, &GetParams::default()).await?;
            match set_bundle(target, name, &mut object.data, bundle) {
                Ok(true) => {}
                other => return Ok(other),
            }
            client.update(&PostParams::default(), &object).await?;
            Ok(Ok(true))
        })
        .await
        .map_err(api)?
    }

    /// Writes `bundle` (PEM, base64-encoded on the way) into every target; every target is
    /// tried, the first error returned.
    pub async fn inject(&self, bundle: &[u8]) -> Result<(), InjectError> {
        let encoded = base64::engine::general_purpose::STANDARD.encode(bundle);
        let mut first_error = None;
        for (target, name) in &self.targets {
            match self.inject_one(*target, name, &encoded).await {
                Ok(true) => tracing::info!(kind = target.kind(), %name, "injected the CA bundle"),
                Ok(false) => {
                    tracing::debug!(kind = target.kind(), %name, "CA bundle already in place")
                }
                Err(error) => {
                    tracing::warn!(%error, "injecting the CA bundle failed");
                    first_error.get_or_insert(error);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Injects the bundle `bundles` holds now, again whenever it changes (a rotated CA),
    /// and every resync period, until `stop` fires. Failures are logged and retried at the
    /// next round (after at most 5 s).
    pub async fn run(self, mut bundles: watch::Receiver<Vec<u8>>, stop: CancellationToken) {
        loop {
            let bundle = bundles.borrow_and_update().clone();
            let wait = match self.inject(&bundle).await {
                Ok(()) => self.resync,
                Err(_) => self.resync.min(Duration::from_secs(5)),
            };
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                changed = bundles.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_webhook_gets_the_bundle_once() -> Result<(), InjectError> {
        let mut vwc = json!({"webhooks": [
            {"name": "a", "clientConfig": {"service": {"name": "s", "namespace": "n"}}},
            {"name": "b", "clientConfig": {"url": "https://x", "caBundle": "old"}}
        ]});
        assert!(set_bundle(Target::Validating, "v", &mut vwc, "new")?);
        assert_eq!(vwc["webhooks"][0]["clientConfig"]["caBundle"], "new");
        assert_eq!(vwc["webhooks"][1]["clientConfig"]["caBundle"], "new");
        assert!(
            !set_bundle(Target::Validating, "v", &mut vwc, "new")?,
            "nothing to change"
        );
        Ok(())
    }

    #[test]
    fn a_crd_without_a_conversion_webhook_is_refused() -> Result<(), InjectError> {
        let mut crd = json!({"spec": {"conversion": {"strategy": "None"}}});
        assert!(matches!(
            set_bundle(Target::Crd, "foos.x", &mut crd, "b"),
            Err(InjectError::NoConversionWebhook(_))
        ));
        let mut crd = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}}}});
        assert!(set_bundle(Target::Crd, "foos.x", &mut crd, "b")?);
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
            "b"
        );
        Ok(())
    }
}
