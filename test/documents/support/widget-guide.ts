/** A small Markdown document with headings, shared by the document suites. */
export const GUIDE = `# Widget Guide

Widgets turn names into readable labels. Every widget has a name and a colour.

## Install

Run the installer, then restart the widget service. The installer needs network access.

## Limits

Free plans have ten widgets. Paid plans have unlimited widgets and priority support.
`;
