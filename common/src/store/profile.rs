//! Keys from the AWS shared files (`~/.aws/credentials`, `~/.aws/config`),
//! for a store whose keys are not in the environment. Only static keys of
//! one profile (`AWS_PROFILE`, else `default`) are read: the official SDK's
//! loader (`aws-config`) would bring a second HTTP stack for this one task.

use std::path::PathBuf;

/// The keys (and region) of the chosen profile.
pub struct Profile {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
    pub region: Option<String>,
}

/// The profile's keys, if the files have them.
pub fn read() -> Option<Profile> {
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let name = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
    let creds_path = std::env::var_os("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".aws/credentials"));
    let config_path = std::env::var_os("AWS_CONFIG_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".aws/config"));
    let creds = std::fs::read_to_string(creds_path).unwrap_or_default();
    let config = std::fs::read_to_string(config_path).unwrap_or_default();
    let config_section = if name == "default" {
        name.clone()
    } else {
        format!("profile {name}")
    };
    let get = |text: &str, section: &str, key: &str| section_value(text, section, key);
    Some(Profile {
        access_key_id: get(&creds, &name, "aws_access_key_id")?,
        secret_access_key: get(&creds, &name, "aws_secret_access_key")?,
        session_token: get(&creds, &name, "aws_session_token"),
        region: get(&config, &config_section, "region"),
    })
}

/// `key = value` in `[section]` of an INI text.
fn section_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == section;
        } else if inside
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_a_key_of_a_section() {
        let text = "[default]\naws_access_key_id = A\n[profile x]\nregion=eu-west-1\n";
        assert_eq!(
            super::section_value(text, "default", "aws_access_key_id").as_deref(),
            Some("A")
        );
        assert_eq!(
            super::section_value(text, "profile x", "region").as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(super::section_value(text, "default", "region"), None);
    }
}
