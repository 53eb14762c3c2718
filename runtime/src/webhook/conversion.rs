//! [`Conversion`]: a CRD conversion webhook from Rust conversions, hub and spokes
//! (controller-runtime's `conversion.Hub` / `Convertible` and its conversion webhook).
//!
//! One version of a kind is the hub; every other version (a spoke) converts to it and from
//! it with `From` / `TryFrom`. An object is converted spoke → hub → spoke, so n versions need
//! 2(n−1) conversions instead of n(n−1).

use std::{collections::HashMap, fmt::Display, sync::Arc};

use kube_core::{
    Resource, Status,
    conversion::{ConversionRequest, ConversionResponse, ConversionReview},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

/// What a hub (and a spoke) version type must be: a resource with a static kind that
/// serialises. Implemented for every such type.
pub trait Hub:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<T> Hub for T where
    T: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

/// Why an object could not be converted; reported in the ConversionReview's `result`.
#[derive(Debug, thiserror::Error)]
pub enum ConversionError {
    /// The object names no apiVersion or one that is not registered.
    #[error("no conversion is registered for apiVersion {0:?}")]
    UnknownVersion(String),
    /// The object is of another kind.
    #[error("kind {found:?} is not {expected:?}")]
    Kind {
        /// The hub's kind.
        expected: String,
        /// The object's.
        found: String,
    },
    /// The object does not decode as its version's type.
    #[error("decoding {api_version} {kind}: {source}")]
    Decode {
        /// The object's apiVersion.
        api_version: String,
        /// Its kind.
        kind: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A `TryFrom` failed.
    #[error("converting from {from} to {to}: {message}")]
    Failed {
        /// The source apiVersion.
        from: String,
        /// The target apiVersion.
        to: String,
        /// The conversion's error.
        message: String,
    },
    /// The converted object does not serialise.
    #[error("encoding {api_version}: {source}")]
    Encode {
        /// The target apiVersion.
        api_version: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

type ToHub<H> = fn(Value, &str) -> Result<H, ConversionError>;
type FromHub<H> = fn(H, &str) -> Result<Value, ConversionError>;

struct Version<H> {
    to_hub: ToHub<H>,
    from_hub: FromHub<H>,
}

fn decode<T: DeserializeOwned>(value: Value, api_version: &str) -> Result<T, ConversionError> {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    serde_json::from_value(value).map_err(|source| ConversionError::Decode {
        api_version: api_version.to_owned(),
        kind,
        source,
    })
}

fn encode<T: Hub>(obj: &T) -> Result<Value, ConversionError> {
    let api_version = T::api_version(&()).into_owned();
    let mut value = serde_json::to_value(obj).map_err(|source| ConversionError::Encode {
        api_version: api_version.clone(),
        source,
    })?;
    if let Value::Object(map) = &mut value {
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(T::kind(&()).into_owned()));
    }
    Ok(value)
}

fn hub_to_hub<H: Hub>(value: Value, api_version: &str) -> Result<H, ConversionError> {
    decode(value, api_version)
}

fn hub_from_hub<H: Hub>(hub: H, _api_version: &str) -> Result<Value, ConversionError> {
    encode(&hub)
}

fn spoke_to_hub<H, S>(value: Value, hub_version: &str) -> Result<H, ConversionError>
where
    H: Hub + TryFrom<S>,
    <H as TryFrom<S>>::Error: Display,
    S: Hub,
{
    let from = S::api_version(&()).into_owned();
    let spoke: S = decode(value, &from)?;
    H::try_from(spoke).map_err(|e| ConversionError::Failed {
        from,
        to: hub_version.to_owned(),
        message: e.to_string(),
    })
}

fn spoke_from_hub<H, S>(hub: H, hub_version: &str) -> Result<Value, ConversionError>
where
    H: Hub,
    S: Hub + TryFrom<H>,
    <S as TryFrom<H>>::Error: Display,
{
    let spoke = S::try_from(hub).map_err(|e| ConversionError::Failed {
        from: hub_version.to_owned(),
        to: S::api_version(&()).into_owned(),
        message: e.to_string(),
    })?;
    encode(&spoke)
}

/// The versions of one kind, keyed by apiVersion, converted through the hub `H`.
///
/// ```
/// # use kubegen::webhook::Conversion;
/// # fn example<V1, V2>() where
/// #   V2: kubegen::webhook::Hub + TryFrom<V1>, <V2 as TryFrom<V1>>::Error: std::fmt::Display,
/// #   V1: kubegen::webhook::Hub + TryFrom<V2>, <V1 as TryFrom<V2>>::Error: std::fmt::Display,
/// # {
/// // V2 is the hub; `impl From<V1> for V2` and `impl TryFrom<V2> for V1` (or `From`).
/// let conversion = Conversion::<V2>::new().spoke::<V1>();
/// # }
/// ```
pub struct Conversion<H> {
    hub_version: String,
    kind: String,
    versions: HashMap<String, Version<H>>,
}

impl<H> std::fmt::Debug for Conversion<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut versions: Vec<&String> = self.versions.keys().collect();
        versions.sort();
        f.debug_struct("Conversion")
            .field("kind", &self.kind)
            .field("hub", &self.hub_version)
            .field("versions", &versions)
            .finish()
    }
}

impl<H: Hub> Default for Conversion<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H: Hub> Conversion<H> {
    /// A conversion whose hub (and only version so far) is `H`.
    pub fn new() -> Self {
        let hub_version = H::api_version(&()).into_owned();
        let mut versions = HashMap::new();
        versions.insert(
            hub_version.clone(),
            Version {
                to_hub: hub_to_hub::<H> as ToHub<H>,
                from_hub: hub_from_hub::<H> as FromHub<H>,
            },
        );
        Self {
            hub_version,
            kind: H::kind(&()).into_owned(),
            versions,
        }
    }

    /// Adds the spoke `S`, converted to the hub with `H: TryFrom<S>` and back with
    /// `S: TryFrom<H>` (a `From` impl gives both).
    #[must_use]
    pub fn spoke<S>(mut self) -> Self
    where
        S: Hub + TryFrom<H>,
        <S as TryFrom<H>>::Error: Display,
        H: TryFrom<S>,
        <H as TryFrom<S>>::Error: Display,
    {
        self.versions.insert(
            S::api_version(&()).into_owned(),
            Version {
                to_hub: spoke_to_hub::<H, S> as ToHub<H>,
                from_hub: spoke_from_hub::<H, S> as FromHub<H>,
            },
        );
        self
    }

    /// The apiVersions this conversion knows, sorted.
    pub fn versions(&self) -> Vec<&str> {
        let mut versions: Vec<&str> = self.versions.keys().map(String::as_str).collect();
        versions.sort_unstable();
        versions
    }

    /// Converts one object to `desired` (an apiVersion): unchanged if it already is in
    /// that version, else through the hub.
    pub fn convert(&self, object: Value, desired: &str) -> Result<Value, ConversionError> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if kind != self.kind {
            return Err(ConversionError::Kind {
                expected: self.kind.clone(),
                found: kind.to_owned(),
            });
        }
        let target = self
            .versions
            .get(desired)
            .ok_or_else(|| ConversionError::UnknownVersion(desired.to_owned()))?;
        if from == desired {
            return Ok(object);
        }
        let source = self
            .versions
            .get(&from)
            .ok_or(ConversionError::UnknownVersion(from))?;
        let hub = (source.to_hub)(object, &self.hub_version)?;
        (target.from_hub)(hub, &self.hub_version)
    }

    /// Answers a ConversionReview: every object converted to the desired version, in order,
    /// or the first failure in `result` (status Failure, its message); the uid echoed.
    pub fn review(&self, review: ConversionReview) -> ConversionReview {
        let request = match ConversionRequest::try_from(review) {
            Ok(request) => request,
            Err(error) => {
                let status = Status::failure(&error.to_string(), "BadRequest").with_code(400);
                return ConversionResponse::invalid(status).into_review();
            }
        };
        let desired = request.desired_api_version.clone();
        let objects = request.objects.clone();
        let uid = request.uid.clone();
        let response = ConversionResponse::for_request(request);
        let converted: Result<Vec<Value>, ConversionError> = objects
            .into_iter()
            .map(|object| self.convert(object, &desired))
            .collect();
        match converted {
            Ok(objects) => response.success(objects),
            Err(error) => {
                tracing::warn!(%uid, %desired, %error, "conversion failed");
                response.failure(Status::failure(&error.to_string(), ""))
            }
        }
        .into_review()
    }
}

/// The object-safe form a conversion route takes.
pub(crate) trait Convert: Send + Sync + 'static {
    fn review(&self, review: ConversionReview) -> ConversionReview;
}

impl<H: Hub> Convert for Conversion<H> {
    fn review(&self, review: ConversionReview) -> ConversionReview {
        Conversion::review(self, review)
    }
}

/// A conversion route, erased.
pub(crate) type DynConvert = Arc<dyn Convert>;

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_in_the_desired_version_pass_unchanged_and_others_are_refused() {
        let conversion = Conversion::<ConfigMap>::new();
        let cm =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "extra": 1});
        assert_eq!(conversion.convert(cm.clone(), "v1").ok(), Some(cm.clone()));
        assert!(matches!(
            conversion.convert(cm.clone(), "v2"),
            Err(ConversionError::UnknownVersion(v)) if v == "v2"
        ));
        let secret = json!({"apiVersion": "v1", "kind": "Secret"});
        assert!(matches!(
            conversion.convert(secret, "v1"),
            Err(ConversionError::Kind { .. })
        ));

        let review: ConversionReview = serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "u", "desiredAPIVersion": "v1", "objects": [cm]}
        }))
        .expect("a review");
        let answer = conversion.review(review);
        let response = answer.response.expect("a response");
        assert_eq!(response.uid, "u");
        assert!(response.result.is_success());
        assert_eq!(response.converted_objects.len(), 1);
    }
}
