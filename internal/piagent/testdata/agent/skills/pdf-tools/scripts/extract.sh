#!/bin/sh
# Print the text of the PDF named by $1, page by page.
exec pdftotext -layout "$1" -
