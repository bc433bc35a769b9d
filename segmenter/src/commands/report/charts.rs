//! The report's charts, drawn by `plotters` into SVG strings that the page
//! inlines: bars per round (stacked by series, or side by side), lines per
//! round, and bars per labelled bucket. The title and the legend are drawn
//! above the plot, never over the data; the y axis's labels have as many
//! decimals as its steps need. Text is SVG `<text>`, which the browser lays
//! out; no font file is read.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width and height of every chart's plot, its title included, pixels
/// (scaled down by the page's CSS on a narrow screen or paper); a legend
/// adds its rows above the plot.
const SIZE: (u32, u32) = (760, 280);
/// Height of the title's strip, and of a row of the legend, pixels.
const TITLE_HEIGHT: u32 = 28;
/// See [`TITLE_HEIGHT`].
const LEGEND_ROW: u32 = 20;
/// Labels on the y axis at most: plotters' steps (1, 2 or 5 × a power of
/// ten) are then at least a fifth of the axis.
const Y_LABELS: usize = 6;

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
    /// Bars, the series side by side (figures of different kinds, one of
    /// which may be close to another).
    Grouped,
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

/// Short labels for a y axis from 0 to `top` (`12k`, `1.5M`, `0.005`), with
/// the decimals its steps need: no two labels of the axis read the same.
fn y_labels(top: f64) -> impl Fn(&f64) -> String {
    let (unit, suffix) = match top {
        t if t >= 1e9 => (1e9, "G"),
        t if t >= 1e6 => (1e6, "M"),
        t if t >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    // The smallest step plotters may take with `Y_LABELS` labels.
    let step = top / unit / Y_LABELS as f64;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10()).ceil().clamp(0.0, 9.0) as usize
    } else {
        0
    };
    move |y: &f64| format!("{:.*}{suffix}", decimals, y / unit)
}

/// The legend's entries (series `k` of `names`) laid out in rows across
/// the chart: each entry's row and left edge.
fn legend_layout(names: &[&str]) -> Vec<(u32, i32)> {
    // A generous width per character of 13-pixel sans-serif text.
    let width = |name: &str| 18 + 8 * name.chars().count() as i32 + 16;
    let right = SIZE.0 as i32 - 10;
    let (mut row, mut x) = (0, 60);
    names
        .iter()
        .map(|name| {
            if x + width(name) > right && x > 60 {
                row += 1;
                x = 60;
            }
            let at = (row, x);
            x += width(name);
            at
        })
        .collect()
}

/// Rows the legend of `names` takes (none for fewer than two series: the
/// title names the one).
fn legend_rows(names: &[&str]) -> u32 {
    if names.len() < 2 {
        return 0;
    }
    legend_layout(names).last().map_or(0, |&(row, _)| row + 1)
}

/// Draws `title` and the legend of `names` (coloured as the series) at the
/// top of `root`; returns the area below them, for the plot.
fn heading<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    names: &[&str],
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, Box<dyn std::error::Error>> {
    let rows = legend_rows(names);
    let (top, plot) = root.split_vertically(TITLE_HEIGHT + rows * LEGEND_ROW);
    let centre =
        TextStyle::from(("sans-serif", 17).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    top.draw_text(title, &centre, (SIZE.0 as i32 / 2, 6))?;
    if rows > 0 {
        for (k, (name, (row, x))) in names.iter().zip(legend_layout(names)).enumerate() {
            let y = (TITLE_HEIGHT + row * LEGEND_ROW) as i32;
            let color = PALETTE[k % PALETTE.len()];
            top.draw(&Rectangle::new(
                [(x, y + 3), (x + 14, y + 13)],
                color.filled(),
            ))?;
            top.draw(&Text::new(
                name.to_string(),
                (x + 18, y + 1),
                ("sans-serif", 13),
            ))?;
        }
    }
    Ok(plot)
}

fn draw_per_round(
    svg: &mut String,
    title: &str,
    y_desc: &str,
    rounds: &[u64],
    series: &[Series],
    kind: Kind,
) -> Drawn {
    let names: Vec<&str> = series.iter().map(|s| s.name).collect();
    let size = (SIZE.0, SIZE.1 + legend_rows(&names) * LEGEND_ROW);
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let plot = heading(&root, title, &names)?;
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
        Kind::Grouped | Kind::Lines => series
            .iter()
            .flat_map(|s| s.values.iter().copied())
            .fold(0.0, f64::max),
    };
    let top = y_top(max);
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(first - 0.6..last + 0.6, 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rounds.len().clamp(2, 12))
        .y_labels(Y_LABELS)
        .x_label_formatter(&whole)
        .y_label_formatter(&y_labels(top))
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
        match kind {
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
                chart.draw_series(bars)?;
            }
            Kind::Grouped => {
                let each = 2.0 * width / series.len() as f64;
                let left = -width + each * k as f64;
                chart.draw_series(points.iter().filter(|(_, v)| *v > 0.0).map(|&(x, v)| {
                    Rectangle::new([(x + left, 0.0), (x + left + each, v)], color.filled())
                }))?;
            }
            Kind::Lines => {
                chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
            }
        }
    }
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
    let plot = heading(&root, title, &[])?;
    let max = values.iter().copied().fold(0.0, f64::max);
    let n = labels.len().max(1);
    let top = y_top(max);
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.6..(n as f64) - 0.4, 0.0..top)?;
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
        .y_labels(Y_LABELS)
        .x_label_formatter(&label_of)
        .y_label_formatter(&y_labels(top))
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The `<text>` elements of `svg`: their x, y, anchor and text.
    pub fn texts(svg: &str) -> Vec<(f64, f64, String, String)> {
        svg.split("<text ")
            .skip(1)
            .map(|t| {
                let attr = |name: &str| {
                    let at = t.find(&format!(" {name}=\"")).map(|i| i + name.len() + 3);
                    at.map_or(String::new(), |i| {
                        t[i..i + t[i..].find('"').unwrap()].into()
                    })
                };
                let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                (
                    format!("0{}", attr("x")).parse().unwrap_or(0.0),
                    attr("y").parse().unwrap_or(0.0),
                    attr("text-anchor"),
                    body.trim().to_string(),
                )
            })
            .collect()
    }

    /// The `<rect>` elements of `svg`: x, y, width, height, fill.
    pub fn rects(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
        svg.split("<rect ")
            .skip(1)
            .map(|t| {
                let t = &t[..t.find("/>").unwrap()];
                let attr = |name: &str| {
                    let i = t.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    t[i..i + t[i..].find('"').unwrap()].to_string()
                };
                let num = |name: &str| attr(name).parse::<f64>().unwrap();
                (
                    num("x"),
                    num("y"),
                    num("width"),
                    num("height"),
                    attr("fill"),
                )
            })
            .collect()
    }

    /// The y axis's labels, top to bottom (the texts anchored at their end).
    pub fn y_axis(svg: &str) -> Vec<String> {
        let mut labels: Vec<(f64, String)> = texts(svg)
            .into_iter()
            .filter(|(_, _, anchor, _)| anchor == "end")
            .map(|(_, y, _, text)| (y, text))
            .collect();
        labels.sort_by(|a, b| a.0.total_cmp(&b.0));
        labels.into_iter().map(|(_, t)| t).collect()
    }

    /// The y of the highest point of the data: bars (rectangles but the
    /// background and the legend's swatches) and lines.
    fn data_top(svg: &str) -> f64 {
        let bars = rects(svg)
            .into_iter()
            .filter(|r| r.4 != "#FFFFFF" && !(r.2 == 14.0 && r.3 == 10.0))
            .map(|r| r.1);
        let lines = svg.split("points=\"").skip(1).flat_map(|p| {
            p[..p.find('"').unwrap()]
                .split_whitespace()
                .filter_map(|xy| xy.split(',').nth(1)?.parse::<f64>().ok())
                .collect::<Vec<_>>()
        });
        bars.chain(lines).fold(f64::MAX, f64::min)
    }

    #[test]
    fn no_two_labels_of_the_y_axis_read_the_same() {
        for max in [0.0216, 0.000_043, 0.3, 7.0, 95.0, 12_345.0, 2_500_000.0] {
            let svg = per_round(
                "fill and false positives, %",
                "%",
                &[1, 2, 3, 4],
                &[
                    Series::new("fill %", vec![max / 4.0, max / 2.0, max * 0.75, max]),
                    Series::new("false positives %", vec![0.0; 4]),
                ],
                Kind::Lines,
            );
            let labels = y_axis(&svg);
            assert!(labels.len() >= 3, "{max}: {labels:?}");
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct, labels, "{max}: labels that read the same");
        }
    }

    #[test]
    fn the_legend_is_drawn_above_the_data_not_over_it() {
        let names = ["fetch", "segmenter", "other", "gap", "new URLs", "backlog"];
        for kind in [Kind::Lines, Kind::Stacked, Kind::Grouped] {
            // Every series at its top in every round: the data fill the
            // top of the plot from left to right.
            let series: Vec<Series> = names
                .iter()
                .map(|n| Series::new(n, vec![100.0; 8]))
                .collect();
            let svg = per_round("a chart", "n", &[1, 2, 3, 4, 5, 6, 7, 8], &series, kind);
            let legend: Vec<f64> = texts(&svg)
                .into_iter()
                .filter(|t| names.contains(&t.3.as_str()))
                .map(|t| t.1)
                .collect();
            assert_eq!(legend.len(), names.len(), "{svg}");
            let lowest = legend.iter().copied().fold(0.0, f64::max);
            // A legend's text is 13 pixels high at most.
            assert!(
                lowest + 13.0 < data_top(&svg),
                "the legend (down to y {lowest}) covers the data (from y {})",
                data_top(&svg)
            );
        }
    }

    #[test]
    fn grouped_bars_stand_side_by_side() {
        let svg = per_round(
            "urls",
            "URLs",
            &[1, 2],
            &[
                Series::new("new URLs", vec![469.0, 10.0]),
                Series::new("scheduled", vec![474.0, 12.0]),
            ],
            Kind::Grouped,
        );
        let bars = |fill: RGBColor| -> Vec<(f64, f64)> {
            let hex = format!("#{:02X}{:02X}{:02X}", fill.0, fill.1, fill.2);
            rects(&svg)
                .into_iter()
                .filter(|r| r.4 == hex && !(r.2 == 14.0 && r.3 == 10.0))
                .map(|r| (r.0, r.0 + r.2))
                .collect()
        };
        let (new, scheduled) = (bars(PALETTE[0]), bars(PALETTE[1]));
        assert_eq!((new.len(), scheduled.len()), (2, 2), "{svg}");
        for (a, b) in new.iter().zip(&scheduled) {
            assert!(
                a.1 <= b.0 || b.1 <= a.0,
                "bars over each other: {a:?} {b:?}"
            );
        }
    }
}
