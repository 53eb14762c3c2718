//! The Widget webhooks' handlers, called as the webhook server calls them (no server, no
//! API server: the rules alone).

use kube_core::ObjectMeta;
use kubegen::webhook::{Defaulter, Validator};

use super::widget::*;
use crate::apis::example::v1alpha1::Widget;

/// A Widget named `name`, otherwise as the user left it.
fn widget(name: &str) -> Widget {
    Widget {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Widget::default()
    }
}

#[tokio::test]
async fn the_defaulter_labels_a_widget_and_keeps_a_label_it_has() {
    let mut obj = widget("example");
    assert!(WidgetDefaulter.default(&mut obj).await.is_ok());
    let labels = obj.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get(NAME_LABEL).map(String::as_str), Some("widget"));

    let mut obj = widget("example");
    obj.metadata.labels = Some([(NAME_LABEL.to_owned(), "mine".to_owned())].into());
    assert!(WidgetDefaulter.default(&mut obj).await.is_ok());
    let labels = obj.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get(NAME_LABEL).map(String::as_str), Some("mine"));
}

#[tokio::test]
async fn the_validator_refuses_names_too_long_for_a_label() {
    let ok = widget("example");
    assert!(WidgetValidator.validate_create(&ok).await.is_ok());
    let long = widget(&"x".repeat(MAX_NAME_LENGTH + 1));
    assert!(WidgetValidator.validate_create(&long).await.is_err());
    assert!(WidgetValidator.validate_update(&ok, &long).await.is_err());
    assert!(WidgetValidator.validate_delete(&long).await.is_ok());
}
