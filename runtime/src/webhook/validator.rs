//! [`Validator`]: typed validation of creates, updates and deletes (controller-runtime's
//! `admission.Validator`), and what it answers: [`Warnings`] or a [`Denied`].

use std::marker::PhantomData;

use futures::future::BoxFuture;
use kube_core::{
    DynamicObject, Status,
    admission::{AdmissionRequest, AdmissionResponse, Operation},
};
use serde::de::DeserializeOwned;

use super::{
    admit::Admit,
    review::{self, Decoded},
};

/// Messages for the API client (kubectl prints them as `Warning: ...`), allowed or not
/// (controller-runtime's `admission.Warnings`).
pub type Warnings = Vec<String>;

/// A refused request: the message and HTTP code the API server reports (controller-runtime's
/// `admission.Denied`, or an error carrying an API status), with warnings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Denied {
    /// Why, as the client sees it: `admission webhook "x" denied the request: <message>`.
    pub message: String,
    /// The HTTP code (403 Forbidden unless set).
    pub code: u16,
    /// The status reason (`Forbidden` unless set).
    pub reason: String,
    /// Warnings to return with the denial.
    pub warnings: Warnings,
}

impl Denied {
    /// A denial with `message`, code 403, reason `Forbidden`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 403,
            reason: "Forbidden".into(),
            warnings: Warnings::new(),
        }
    }

    /// A denial as an invalid object: code 422, reason `Invalid`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(message).with_code(422).with_reason("Invalid")
    }

    /// With HTTP code `code`.
    #[must_use]
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    /// With status reason `reason`.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }

    /// With warnings.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }

    /// The answer to `request`.
    pub(crate) fn respond(self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        let mut response = AdmissionResponse::from(request);
        response.allowed = false;
        response.result = Status::failure(&self.message, &self.reason).with_code(self.code);
        response.warnings = (!self.warnings.is_empty()).then_some(self.warnings);
        response
    }
}

/// Validates objects of type `K` (controller-runtime's `admission.Validator[T]`). Every
/// method allows by default; implement those you need, with `async fn`. The request
/// (user, dry-run, subresource) is at hand through [`request`](super::request).
pub trait Validator<K>: Send + Sync + 'static {
    /// A CREATE of `obj`.
    fn validate_create(&self, obj: &K) -> impl Future<Output = Result<Warnings, Denied>> + Send {
        let _ = obj;
        async { Ok(Warnings::new()) }
    }

    /// An UPDATE from `old` to `new`.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
    ) -> impl Future<Output = Result<Warnings, Denied>> + Send {
        let _ = (old, new);
        async { Ok(Warnings::new()) }
    }

    /// A DELETE of `obj` (the object as stored).
    fn validate_delete(&self, obj: &K) -> impl Future<Output = Result<Warnings, Denied>> + Send {
        let _ = obj;
        async { Ok(Warnings::new()) }
    }
}

/// A [`Validator`] as an admission route.
pub(crate) struct ValidatingHandler<K, V> {
    validator: V,
    _object: PhantomData<fn() -> K>,
}

impl<K, V> ValidatingHandler<K, V> {
    pub(crate) fn new(validator: V) -> Self {
        Self {
            validator,
            _object: PhantomData,
        }
    }
}

impl<K, V> ValidatingHandler<K, V>
where
    K: DeserializeOwned + Send + Sync + 'static,
    V: Validator<K>,
{
    async fn validate(&self, decoded: &Decoded) -> AdmissionResponse {
        let request = &decoded.request;
        let outcome = match request.operation {
            Operation::Connect => Ok(Warnings::new()),
            Operation::Create => match decoded.typed::<K>("object") {
                Ok(obj) => self.validator.validate_create(&obj).await,
                Err(error) => return review::errored(request, 400, error.to_string()),
            },
            Operation::Update => {
                let new = decoded.typed::<K>("object");
                let old = decoded.typed::<K>("oldObject");
                match (old, new) {
                    (Ok(old), Ok(new)) => self.validator.validate_update(&old, &new).await,
                    (Err(error), _) | (_, Err(error)) => {
                        return review::errored(request, 400, error.to_string());
                    }
                }
            }
            // The object being deleted is the old object (kubernetes#76346).
            Operation::Delete => match decoded.typed::<K>("oldObject") {
                Ok(obj) => self.validator.validate_delete(&obj).await,
                Err(error) => return review::errored(request, 400, error.to_string()),
            },
        };
        match outcome {
            Ok(warnings) => {
                let mut response = review::allowed(request);
                response.warnings = (!warnings.is_empty()).then_some(warnings);
                response
            }
            Err(denied) => denied.respond(request),
        }
    }
}

impl<K, V> Admit for ValidatingHandler<K, V>
where
    K: DeserializeOwned + Send + Sync + 'static,
    V: Validator<K>,
{
    fn admit(&self, decoded: Decoded) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(async move { self.validate(&decoded).await })
    }
}
