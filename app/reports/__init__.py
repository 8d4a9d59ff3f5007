"""Analytics reports: rendering a day's summary as a self-contained HTML page (charts as inline
SVG, no network) and serving the days at ``/reports``."""
