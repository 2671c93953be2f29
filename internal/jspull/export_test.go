package jspull

// MaxRepeatedCompleted is maxRepeatedCompleted, for the external tests.
const MaxRepeatedCompleted = maxRepeatedCompleted
