//! The CRD strategy's check of `spec.conversion` (served by `crate::conversion`) (apiextensions-apiserver
//! `pkg/apis/apiextensions/validation/validation.go` `validateCustomResourceConversion`
//! and `validateConversionReviewVersions`; the strategy enum in
//! `ValidateCustomResourceDefinitionSpec`). Paths are the internal type's, as kube-apiserver
//! reports them for a v1 CRD: `spec.conversion.webhookClientConfig`.

use serde_json::Value;

use crate::{
    schema::{ErrorType, FieldError},
    webhook::{ClientConfig, ConfigError},
};

const RECOGNIZED: [&str; 2] = ["v1", "v1beta1"];

/// The 422 errors of a CRD's `spec.conversion` (none when it is absent: strategy `None`).
pub fn validate(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(conversion) = crd.pointer("/spec/conversion").filter(|c| !c.is_null()) else {
        return errs;
    };
    let strategy = conversion
        .get("strategy")
        .and_then(Value::as_str)
        .unwrap_or("None");
    let client = conversion
        .pointer("/webhook/clientConfig")
        .filter(|c| !c.is_null());
    let versions: Vec<&str> = conversion
        .pointer("/webhook/conversionReviewVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let at = "spec.conversion.webhookClientConfig";
    match strategy {
        "None" => {
            if client.is_some() {
                errs.push(FieldError::new(
                    ErrorType::Forbidden,
                    at,
                    None,
                    "should not be set when strategy is not set to Webhook",
                ));
            }
            if !versions.is_empty() {
                errs.push(FieldError::new(
                    ErrorType::Forbidden,
                    "spec.conversion.conversionReviewVersions",
                    None,
                    "should not be set when strategy is not set to Webhook",
                ));
            }
        }
        "Webhook" => {
            match client {
                None => errs.push(FieldError::required(
                    at,
                    "required when strategy is set to Webhook",
                )),
                Some(config) => match ClientConfig::from_json(config) {
                    Ok(_) => {}
                    Err(ConfigError::NoEndpoint) => errs.push(FieldError::required(
                        at,
                        "exactly one of url or service is required",
                    )),
                    Err(ConfigError::BadUrl { url, reason }) => errs.push(FieldError::invalid(
                        &format!("{at}.url"),
                        &Value::String(url),
                        reason,
                    )),
                    Err(ConfigError::BadCaBundle(reason)) => errs.push(FieldError::invalid(
                        &format!("{at}.caBundle"),
                        &Value::String(String::new()),
                        reason,
                    )),
                },
            }
            let field = "spec.conversion.conversionReviewVersions";
            if versions.is_empty() {
                errs.push(FieldError::required(
                    field,
                    "must include at least one of v1, v1beta1",
                ));
            } else if !versions.iter().any(|v| RECOGNIZED.contains(v)) {
                errs.push(FieldError::invalid(
                    field,
                    &Value::Array(
                        versions
                            .iter()
                            .map(|v| Value::String((*v).to_owned()))
                            .collect(),
                    ),
                    "must include at least one of v1, v1beta1",
                ));
            }
        }
        other => errs.push(FieldError::new(
            ErrorType::NotSupported,
            "spec.conversion.strategy",
            Some(Value::String(other.to_owned())),
            "supported values: \"None\", \"Webhook\"",
        )),
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(conversion: Value) -> Vec<String> {
        validate(&json!({"spec": {"conversion": conversion}}))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// validation.go `validateCustomResourceConversion`: Webhook needs a client config with
    /// exactly one of url or service and a recognized review version; None forbids them.
    #[test]
    fn conversion_rules() {
        assert!(messages(json!({"strategy": "None"})).is_empty());
        assert!(
            messages(json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": "https://127.0.0.1:8443/convert"}, "conversionReviewVersions": ["v1"]}}))
            .is_empty()
        );
        assert_eq!(
            messages(json!({"strategy": "Webhook"})),
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value: must include at least one of v1, v1beta1",
            ]
        );
        assert_eq!(
            messages(
                json!({"strategy": "Webhook", "webhook": {"clientConfig": {}, "conversionReviewVersions": ["v2"]}})
            ),
            [
                "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required",
                "spec.conversion.conversionReviewVersions: Invalid value: []interface {}{\"v2\"}: must include at least one of v1, v1beta1",
            ]
        );
        assert_eq!(
            messages(json!({"strategy": "Magic"})),
            [
                "spec.conversion.strategy: Unsupported value: \"Magic\": supported values: \"None\", \"Webhook\""
            ]
        );
        assert_eq!(
            messages(
                json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://a/"}}})
            ),
            [
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook"
            ]
        );
    }
}
