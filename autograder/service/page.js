"use strict";
// The students' page of `autograder serve` (autograder/service/page.py draws it): hand in the
// notebook with the token, follow its status, show the feedback. Texts come from the page, in
// the course's language; every text is set with textContent, never as HTML.
const say = JSON.parse(document.getElementById("texts").textContent);
const form = document.getElementById("hand-in");
const token = document.getElementById("token");
const notebook = document.getElementById("notebook");
const statusLine = document.getElementById("status");
const result = document.getElementById("result");
const frame = document.getElementById("feedback");
const POLL_MS = 1000;
let following = null;

function show(message, kind) {
  statusLine.textContent = message;
  statusLine.className = kind || "";
}

function headers() {
  return {Authorization: "Bearer " + token.value.trim()};
}

async function reasonOf(response) {
  try {
    return (await response.json()).reason || response.statusText;
  } catch (error) {
    return response.statusText;
  }
}

async function handIn(event) {
  event.preventDefault();
  if (!token.value.trim() || notebook.files.length !== 1) {
    show(say.choose, "bad");
    return;
  }
  sessionStorage.setItem("autograder-token", token.value.trim());
  const body = new FormData();
  body.append("notebook", notebook.files[0]);
  clearTimeout(following);
  result.hidden = true;
  show(say.sending);
  let response;
  try {
    response = await fetch("api/submissions", {method: "POST", headers: headers(), body});
  } catch (error) {
    show(say.unreachable, "bad");
    return;
  }
  if (response.status !== 202) {
    show(await reasonOf(response), "bad");
    return;
  }
  const submission = await response.json();
  sessionStorage.setItem("autograder-submission", submission.id);
  poll(submission.id);
}

async function poll(id) {
  let response;
  try {
    response = await fetch("api/submissions/" + encodeURIComponent(id), {headers: headers()});
  } catch (error) {
    show(say.unreachable, "bad");
    following = setTimeout(() => poll(id), 5 * POLL_MS);
    return;
  }
  if (!response.ok) {
    show(await reasonOf(response), "bad");
    return;
  }
  const submission = await response.json();
  const done = submission.status === "done";
  show(say[submission.status] + " (" + say.submission.replace("{id}", id) + ")", done ? "ok" : "");
  if (done) {
    await showFeedback(id);
  } else if (submission.status !== "replaced") {
    following = setTimeout(() => poll(id), POLL_MS);
  }
}

async function showFeedback(id) {
  const response = await fetch("api/submissions/" + encodeURIComponent(id) + "/feedback", {headers: headers()});
  if (!response.ok) {
    show(await reasonOf(response), "bad");
    return;
  }
  frame.srcdoc = await response.text();
  result.hidden = false;
}

form.addEventListener("submit", handIn);
token.value = sessionStorage.getItem("autograder-token") || "";
const last = sessionStorage.getItem("autograder-submission");
if (token.value && last) {
  poll(last);
} else {
  show(say.choose);
}
