// Shared by the lab page (work.js) and the lecturer's page: a file the page made, saved through the
// browser's own download (an <a download> on a blob: the API's token stays in a header).
"use strict";

function saveAs(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
