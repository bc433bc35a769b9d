//! The report's charts, drawn by `plotters` into SVG strings that the page
//! inlines: bars per round (stacked by series), lines per round, and bars
//! per labelled bucket. Text is SVG `<text>`, which the browser lays out;
//! no font file is read.

use plotters::prelude::*;

/// Width and height of every chart, pixels (scaled down by the page's CSS
/// on a narrow screen or paper).
const SIZE: (u32, u32) = (760, 280);

/// The colours of the series, in order: distinct on screen and in grey print.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

/// One named series of values, one per round (or per bucket).
pub struct Series<'a> {
    /// Its name in the legend.
    pub name: &'a str,
    /// Its values, in the order of the x values.
    pub values: Vec<f64>,
}

impl<'a> Series<'a> {
    /// A series named `name`.
    pub fn new(name: &'a str, values: Vec<f64>) -> Series<'a> {
        Series { name, values }
    }
}

/// How a per-round chart draws its series.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bars, the series stacked.
    Stacked,
    /// Lines.
    Lines,
}

type Drawn = Result<(), Box<dyn std::error::Error>>;

/// A chart of `series` over `rounds` (the x values), titled `title`, the y
/// axis described as `y_desc`. Returns the SVG text.
pub fn per_round(
    title: &str,
    y_desc: &str,
    rounds: &[u64],
    series: &[Series],
    kind: Kind,
) -> String {
    let mut svg = String::new();
    let drawn = draw_per_round(&mut svg, title, y_desc, rounds, series, kind);
    finish(svg, drawn, title)
}

/// Bars of `values` over the labelled buckets `labels`.
pub fn buckets(title: &str, y_desc: &str, labels: &[String], values: &[f64]) -> String {
    let mut svg = String::new();
    let drawn = draw_buckets(&mut svg, title, y_desc, labels, values);
    finish(svg, drawn, title)
}

/// The SVG, or a note in its place if plotters failed (it only fails on
/// bad ranges, which the callers avoid).
fn finish(svg: String, drawn: Drawn, title: &str) -> String {
    match drawn {
        Ok(()) => svg,
        Err(e) => format!("<p class=\"missing\">chart “{title}” not drawn: {e}</p>"),
    }
}

/// The top of the y axis for values up to `max`: a little headroom, never 0.
fn y_top(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.08
    } else {
        1.0
    }
}

/// Whole numbers on the axis, nothing between them.
fn whole(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-6 {
        format!("{}", x.round() as i64)
    } else {
        String::new()
    }
}

/// `1234567` → `1.2M`, `0.25` → `0.25`: short axis labels.
fn short(y: &f64) -> String {
    let a = y.abs();
    if a >= 1e9 {
        format!("{:.1}G", y / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", y / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", y / 1e3)
    } else if a >= 10.0 || (y - y.round()).abs() < 1e-9 {
        format!("{y:.0}")
    } else {
        format!("{y:.2}")
    }
}

fn draw_per_round(
    svg: &mut String,
    title: &str,
    y_desc: &str,
    rounds: &[u64],
    series: &[Series],
    kind: Kind,
) -> Drawn {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let first = rounds.first().copied().unwrap_or(1) as f64;
    let last = rounds.last().copied().unwrap_or(1) as f64;
    let max = match kind {
        Kind::Stacked => (0..rounds.len())
            .map(|i| {
                series
                    .iter()
                    .map(|s| s.values.get(i).copied().unwrap_or(0.0))
                    .sum()
            })
            .fold(0.0, f64::max),
        Kind::Lines => series
            .iter()
            .flat_map(|s| s.values.iter().copied())
            .fold(0.0, f64::max),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(first - 0.6..last + 0.6, 0.0..y_top(max))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rounds.len().clamp(2, 12))
        .x_label_formatter(&whole)
        .y_label_formatter(&short)
        .x_desc("round")
        .y_desc(y_desc)
        .draw()?;
    let width = if rounds.len() > 150 { 0.5 } else { 0.4 };
    let mut base = vec![0.0; rounds.len()];
    for (k, s) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let points: Vec<(f64, f64)> = rounds
            .iter()
            .zip(&s.values)
            .map(|(&r, &v)| (r as f64, v))
            .collect();
        let drawn = match kind {
            Kind::Stacked => {
                let bars: Vec<Rectangle<(f64, f64)>> = points
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, v))| *v > 0.0)
                    .map(|(i, &(x, v))| {
                        let y0 = base[i];
                        base[i] += v;
                        Rectangle::new([(x - width, y0), (x + width, y0 + v)], color.filled())
                    })
                    .collect();
                chart.draw_series(bars)?
            }
            Kind::Lines => chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?,
        };
        drawn
            .label(s.name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}

fn draw_buckets(
    svg: &mut String,
    title: &str,
    y_desc: &str,
    labels: &[String],
    values: &[f64],
) -> Drawn {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let max = values.iter().copied().fold(0.0, f64::max);
    let n = labels.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.6..(n as f64) - 0.4, 0.0..y_top(max))?;
    let label_of = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label_of)
        .y_label_formatter(&short)
        .y_desc(y_desc)
        .draw()?;
    let color = PALETTE[0];
    chart.draw_series(values.iter().enumerate().map(|(i, &v)| {
        let x = i as f64;
        Rectangle::new([(x - 0.35, 0.0), (x + 0.35, v)], color.filled())
    }))?;
    root.present()?;
    Ok(())
}
