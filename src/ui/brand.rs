//! The deployment's brand: the name its pages and messages carry, its logo, its accent colour
//! and where people get help. Every value is checked when grantry starts; the defaults are
//! neutral (grantry's own name, its blue, no logo, no support link).

use std::path::Path;
use std::sync::Arc;

/// The largest logo accepted: it is sent with every page view.
pub(crate) const MAX_LOGO_BYTES: usize = 256 * 1024;

/// The name shown when none is configured.
pub(crate) const DEFAULT_NAME: &str = "grantry";

/// The brand, as every page and person-facing message shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Brand {
    pub(crate) name: String,
    pub(crate) logo: Option<Logo>,
    pub(crate) color: Option<Color>,
    pub(crate) support_url: Option<url::Url>,
}

impl Default for Brand {
    fn default() -> Self {
        Self {
            name: DEFAULT_NAME.to_owned(),
            logo: None,
            color: None,
            support_url: None,
        }
    }
}

impl Brand {
    /// The stylesheet rules the brand adds to grantry's own (none without a colour).
    pub(crate) fn stylesheet(&self) -> String {
        match &self.color {
            Some(color) => format!(
                ":root {{ --accent: {}; --on-accent: {}; }}\n",
                color.hex(),
                color.text_on().hex()
            ),
            None => String::new(),
        }
    }
}

/// Why a brand setting was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum BrandError {
    #[error("cannot be read: {0}")]
    Unreadable(String),
    #[error("is {size} bytes; a logo may be at most {MAX_LOGO_BYTES} bytes (256 KiB)")]
    TooLarge { size: u64 },
    #[error("is not a regular file (a logo is read whole at start: a pipe or a device is not)")]
    NotAFile,
    #[error("is not a PNG, JPEG, WebP or SVG image")]
    NotAnImage,
    #[error("`{0}` is not a colour as #RRGGBB or #RGB")]
    NotAColor(String),
    #[error(
        "{0} is too light to read on white (contrast {1:.1}:1, at least 4.5:1 is needed); \
         choose a darker colour"
    )]
    TooLight(String, f64),
    #[error("must be 1 to 60 characters, with no line break")]
    BadName,
}

/// Checks a brand name: short, on one line.
pub(crate) fn check_name(name: &str) -> Result<String, BrandError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 60 || name.contains(['\n', '\r']) {
        return Err(BrandError::BadName);
    }
    Ok(name.to_owned())
}

/// A logo, read once at start and served by grantry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Logo {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) content_type: &'static str,
}

impl Logo {
    /// Reads and checks the file: a regular file (a FIFO or `/dev/zero` would block the
    /// start or never end), at most [`MAX_LOGO_BYTES`] (no more than that plus one is ever
    /// read), a PNG, JPEG, WebP or SVG by its content (not its name).
    pub(crate) fn load(path: &Path) -> Result<Self, BrandError> {
        use std::io::Read as _;
        let unreadable = |e: std::io::Error| BrandError::Unreadable(e.to_string());
        // Checked before opening: opening a FIFO for reading waits for a writer.
        let metadata = std::fs::metadata(path).map_err(unreadable)?;
        if !metadata.is_file() {
            return Err(BrandError::NotAFile);
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(unreadable)?
            .take(MAX_LOGO_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() > MAX_LOGO_BYTES {
            // The file grew after the check, or is larger than it says: its size is at least this.
            return Err(BrandError::TooLarge {
                size: metadata.len().max(bytes.len() as u64),
            });
        }
        let content_type = image_type(&bytes).ok_or(BrandError::NotAnImage)?;
        Ok(Self {
            bytes: bytes.into(),
            content_type,
        })
    }
}

/// The image type `bytes` start with, by their signature.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some("image/png");
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some("image/jpeg");
    }
    if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.trim_start_matches('\u{feff}').trim_start();
    let svg = (start.starts_with("<svg") || start.starts_with("<?xml"))
        && text.contains("<svg")
        && text.trim_end().ends_with('>');
    svg.then_some("image/svg+xml")
}

/// An accent colour, opaque sRGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Color {
    rgb: [u8; 3],
}

const WHITE: Color = Color {
    rgb: [255, 255, 255],
};
const INK: Color = Color {
    rgb: [0x1d, 0x23, 0x30],
};

impl Color {
    /// `#RRGGBB` or `#RGB`, dark enough to be link text on white (WCAG AA, 4.5:1).
    pub(crate) fn parse(text: &str) -> Result<Self, BrandError> {
        let refuse = || BrandError::NotAColor(text.to_owned());
        let hex = text.strip_prefix('#').ok_or_else(refuse)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refuse());
        }
        let digit = |i: usize, width: usize| {
            let part = &hex[i * width..(i + 1) * width];
            let value = u8::from_str_radix(part, 16).expect("hex digits");
            if width == 1 { value * 17 } else { value }
        };
        let rgb = match hex.len() {
            3 => [digit(0, 1), digit(1, 1), digit(2, 1)],
            6 => [digit(0, 2), digit(1, 2), digit(2, 2)],
            _ => return Err(refuse()),
        };
        let color = Self { rgb };
        let contrast = color.contrast(WHITE);
        if contrast < 4.5 {
            return Err(BrandError::TooLight(color.hex(), contrast));
        }
        Ok(color)
    }

    pub(crate) fn hex(self) -> String {
        format!("#{}", hex::encode(self.rgb))
    }

    /// The text colour on a button of this colour: white or ink, whichever reads better.
    pub(crate) fn text_on(self) -> Color {
        if self.contrast(WHITE) >= self.contrast(INK) {
            WHITE
        } else {
            INK
        }
    }

    /// WCAG 2 relative luminance.
    fn luminance(self) -> f64 {
        let channel = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(self.rgb[0])
            + 0.7152 * channel(self.rgb[1])
            + 0.0722 * channel(self.rgb[2])
    }

    /// WCAG 2 contrast ratio with `other`, from 1 to 21.
    fn contrast(self, other: Color) -> f64 {
        let (a, b) = (self.luminance(), other.luminance());
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_hex_and_dark_enough_to_read_on_white() {
        assert!(matches!(
            Color::parse("#0b5"),
            Err(BrandError::TooLight(..))
        ));
        assert_eq!(Color::parse("#7A1F5C").unwrap().hex(), "#7a1f5c");
        assert_eq!(Color::parse("#036").unwrap().hex(), "#003366");
        for refused in ["7a1f5c", "#7a1f5", "#gggggg", "red", "#7a1f5c;x", ""] {
            assert!(
                matches!(Color::parse(refused), Err(BrandError::NotAColor(_))),
                "{refused}"
            );
        }
        assert!(matches!(
            Color::parse("#ffcc00"),
            Err(BrandError::TooLight(..))
        ));
        assert_eq!(Color::parse("#003366").unwrap().text_on(), WHITE);
    }

    #[test]
    fn a_logo_is_an_image_by_its_content_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let png = write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        assert_eq!(Logo::load(&png).unwrap().content_type, "image/png");
        let svg = write(
            "logo.svg",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>\n",
        );
        assert_eq!(Logo::load(&svg).unwrap().content_type, "image/svg+xml");
        let text = write("logo.png2", b"not an image at all");
        assert_eq!(Logo::load(&text), Err(BrandError::NotAnImage));
        let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
        big.resize(MAX_LOGO_BYTES + 1, 0);
        let big = write("big.png", &big);
        assert_eq!(
            Logo::load(&big),
            Err(BrandError::TooLarge {
                size: MAX_LOGO_BYTES as u64 + 1
            })
        );
        // Neither a device nor a pipe is read: /dev/zero never ends, a FIFO waits for a writer.
        assert_eq!(
            Logo::load(Path::new("/dev/zero")),
            Err(BrandError::NotAFile)
        );
        let fifo = dir.path().join("logo.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert_eq!(Logo::load(&fifo), Err(BrandError::NotAFile));
        }
        assert!(matches!(
            Logo::load(&dir.path().join("missing.png")),
            Err(BrandError::Unreadable(_))
        ));
    }

    #[test]
    fn names_are_short_and_on_one_line() {
        assert_eq!(check_name("  Acme Billing ").unwrap(), "Acme Billing");
        assert_eq!(check_name(""), Err(BrandError::BadName));
        assert_eq!(check_name("a\nb"), Err(BrandError::BadName));
        assert_eq!(check_name(&"x".repeat(61)), Err(BrandError::BadName));
    }
}
